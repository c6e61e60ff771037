import { digestOf } from './canonical';
import { ModuleManifest } from './module';
import { ServiceResource } from './resource';

describe('provisions in module.json', () => {
  const base = { name: 'app', version: '1', resources: [] };

  test('a consumer names its file and owner; group and a closed mode are defaulted', () => {
    const parsed = ModuleManifest.parse({ ...base, consumes: [{ provision: 'app-database', path: '/etc/app/db-credential', owner: 'app' }] });
    expect(parsed.consumes).toEqual([{ provision: 'app-database', path: '/etc/app/db-credential', owner: 'app', group: 'root', mode: '0600' }]);
  });

  test('refuses a credential file without an owner, open to every account, or at the root', () => {
    const need = { provision: 'app-database', path: '/etc/app/db-credential', owner: 'app' };
    const { owner: _owner, ...ownerless } = need;
    expect(ModuleManifest.safeParse({ ...base, consumes: [ownerless] }).success).toBe(false);
    expect(ModuleManifest.safeParse({ ...base, consumes: [{ ...need, mode: '0644' }] }).error?.issues[0]?.message).toMatch(/must not be open to every account/);
    expect(ModuleManifest.safeParse({ ...base, provides: [{ ...need, path: '/' }] }).success).toBe(false);
  });

  test('refuses a provision offered twice, and a name too long to seal under', () => {
    const offer = { provision: 'app-database', path: '/etc/db/accepted', owner: 'postgres' };
    expect(ModuleManifest.safeParse({ ...base, provides: [offer, { ...offer, path: '/etc/db/other' }] }).error?.issues[0]?.message).toBe('a provision is offered twice');
    expect(ModuleManifest.safeParse({ ...base, provides: [{ ...offer, provision: 'a'.repeat(41) }] }).success).toBe(false);
  });

  test('a module saying nothing of provisions digests as before they existed', () => {
    expect(digestOf(ModuleManifest.parse(base))).toBe(digestOf({ ...base, upgrade_policy: 'one-first' }));
  });
});

describe('restart_on', () => {
  test('names absolute files, at least one; left out it is absent, not empty', () => {
    const service = { shape: 'service', name: 'app', state: 'running', enabled: true };
    expect(ServiceResource.parse(service)).not.toHaveProperty('restart_on');
    expect(ServiceResource.parse({ ...service, restart_on: ['/etc/app/db-credential'] }).restart_on).toEqual(['/etc/app/db-credential']);
    expect(ServiceResource.safeParse({ ...service, restart_on: [] }).success).toBe(false);
    expect(ServiceResource.safeParse({ ...service, restart_on: ['etc/app'] }).success).toBe(false);
  });
});
