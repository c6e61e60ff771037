import type { ControllerContext } from '../controller-context';
import { PlanBook } from '../plans/plan-book';
import { useTestStore } from '../store/testing/use-test-store';
import { addModule } from './add-module';
import { ModuleVersionNotNewer, ModuleVersionReused } from './module-errors';
import { newestRevision } from './modules.repo';

describe('module add', () => {
  const t = useTestStore('postgres');
  const logs: string[] = [];
  // Only what registering a module no node runs touches: the store and the clock.
  const ctx = (): ControllerContext =>
    ({ store: t.store, now: () => new Date('2026-12-01T10:00:00Z'), epoch: () => 4, log: (line: string) => logs.push(line) }) as unknown as ControllerContext;
  const manifest = (version: string, text = `${version}\n`) => ({
    name: 'web',
    version,
    upgrade_policy: 'one-first' as const,
    resources: [{ shape: 'file' as const, path: '/srv/web/version', content: { text }, mode: '0644', owner: 'root', group: 'root' }],
  });

  test('registers a first revision and says no node runs it', async () => {
    const added = await addModule(ctx(), new PlanBook(ctx()), { module: manifest('1.9'), source: '/tmp/web/module.json' });
    expect(added).toEqual({ module: 'web', version: '1.9', upgrade_policy: 'one-first', added: true, plan: null, superseded: [] });
    expect(await newestRevision(t.store, 'web')).toMatchObject({ version: '1.9', seq: 1, source: '/tmp/web/module.json' });
  });

  test('a higher version by number, not by text, is the newest', async () => {
    await addModule(ctx(), new PlanBook(ctx()), { module: manifest('1.10') });
    expect(await newestRevision(t.store, 'web')).toMatchObject({ version: '1.10', seq: 2 });
  });

  test('refuses a version not above the newest, naming it, and registers nothing', async () => {
    const refused = await addModule(ctx(), new PlanBook(ctx()), { module: manifest('1.9.1') }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ModuleVersionNotNewer);
    expect((refused as ModuleVersionNotNewer).message).toBe('module web 1.9.1 is not newer than the registered 1.10; nothing was registered: "1.9.1"');
    expect((await newestRevision(t.store, 'web'))?.version).toBe('1.10');
  });

  test('the same version again is nothing new with the same content, and refused with other content', async () => {
    expect(await addModule(ctx(), new PlanBook(ctx()), { module: manifest('1.10') })).toMatchObject({ added: false, version: '1.10' });
    await expect(addModule(ctx(), new PlanBook(ctx()), { module: manifest('1.10', 'changed\n') })).rejects.toThrow(ModuleVersionReused);
    expect((await newestRevision(t.store, 'web'))?.seq).toBe(2);
  });
});
