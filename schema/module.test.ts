import { compareModuleVersions, ModuleManifest, ModuleVersion } from './module';

describe('module.json', () => {
  test('takes a name, a version and resources, and defaults the upgrade policy to one-first', () => {
    const parsed = ModuleManifest.parse({ name: 'web', version: '1.2.0', resources: [{ shape: 'file', path: '/srv/web/index.html', content: { text: 'hi\n' } }] });
    expect(parsed.upgrade_policy).toBe('one-first');
    expect(parsed.resources[0]).toMatchObject({ mode: '0644', owner: 'root' });
  });

  test('refuses an unknown policy, an unknown field and a name that is not a label', () => {
    expect(ModuleManifest.safeParse({ name: 'web', version: '1', upgrade_policy: 'canary', resources: [] }).success).toBe(false);
    expect(ModuleManifest.safeParse({ name: 'web', version: '1', resources: [], description: 'x' }).success).toBe(false);
    expect(ModuleManifest.safeParse({ name: 'Web_Server', version: '1', resources: [] }).success).toBe(false);
  });

  test('refuses two resources on one path within a module', () => {
    const twice = { shape: 'file', path: '/etc/x', content: { text: '' } };
    expect(ModuleManifest.safeParse({ name: 'web', version: '1', resources: [twice, twice] }).success).toBe(false);
  });

  test('versions are one to four whole numbers without leading zeros', () => {
    for (const good of ['0', '1', '1.2', '1.2.3', '10.0.0.7']) expect([good, ModuleVersion.safeParse(good).success]).toEqual([good, true]);
    for (const bad of ['', '01', '1.02', '1.2.3.4.5', 'v1', '1.2-rc1', '1..2']) expect([bad, ModuleVersion.safeParse(bad).success]).toEqual([bad, false]);
  });

  test('orders versions number by number, a missing number counting as 0', () => {
    expect(compareModuleVersions('1.10', '1.9')).toBe(1);
    expect(compareModuleVersions('1.9', '1.10')).toBe(-1);
    expect(compareModuleVersions('2', '1.99.99')).toBe(1);
    expect(compareModuleVersions('1.2', '1.2.0')).toBe(0);
  });
});
