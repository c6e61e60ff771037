import type { NatsConnection } from '@nats-io/transport-node';
import type { Declaration } from '../../../schema/declaration';
import type { ModuleManifest } from '../../../schema/module';
import type { Resource } from '../../../schema/resource';
import type { SeatListed } from '../../../schema/seat';
import type { ControllerContext } from '../controller-context';
import { useTestController } from '../enrolment/testing/test-controller';
import { addModule } from '../modules/add-module';
import { assignModules } from '../modules/assign-modules';
import { unassignModules } from '../modules/unassign-modules';
import { ModuleCollision } from '../modules/module-errors';
import { PlanBook } from '../plans/plan-book';
import { setDeclaredResources } from '../declarations/declarations.repo';
import type { SeatChanged } from './change-seat';
import { RESOLV_CONF_PATH, RESOLVER_CONFIG_PATH } from './render-resolver';
import { SeatChangeUnclear, SeatHeldBySeveral, SeatHeldThroughModule, SeatHolderNotFound, SeatNotHeld, SeatStillNeeded, SeatTaken } from './seat-errors';
import { seatsPart } from './seats.part';

// Seats through the serving controller's verbs and assign/unassign, over a real broker and
// store, with three enrolled nodes reading their declarations from their own consumers: the
// resolver seat composed on its holders and in every node's resolv.conf, the roster fact, a
// second holder of a single seat refused (by hand and at assign) and of a replicated one taken,
// and the last holder of a seat something needs kept.

const NODES = ['alpha', 'beta', 'gamma'] as const;

describe('seats held by nodes and composed into their declarations', () => {
  const t = useTestController('pglite');
  let ctx: ControllerContext;
  const links = new Map<string, NatsConnection>();
  const address = new Map<string, string>();

  const call = async <R>(verb: string, args: Record<string, unknown>): Promise<{ result: R; text: string }> => {
    const answer = await t.verbs.call(ctx, verb, args);
    return { result: answer.result as R, text: answer.text };
  };
  const seat = (args: Record<string, unknown>) => call<SeatChanged>('seat', args);
  const listed = async (name: string): Promise<SeatListed | undefined> => (await call<{ seats: SeatListed[] }>('seats', {})).result.seats.find((entry) => entry.seat === name);
  const latest = async (node: string): Promise<Declaration> => (await t.nextDeclaration(links.get(node) as NatsConnection, node)).declaration;
  const fileText = (declaration: Declaration, path: string): string | undefined => {
    const file = declaration.resources.find((resource): resource is Extract<Resource, { shape: 'file' }> => resource.shape === 'file' && resource.path === path);
    return file !== undefined && 'text' in file.content ? file.content.text : undefined;
  };
  const nameservers = (declaration: Declaration): string[] => [...(fileText(declaration, RESOLV_CONF_PATH) ?? '').matchAll(/^nameserver (\S+)$/gm)].map((match) => match[1] as string);
  const module = async (manifest: Omit<ModuleManifest, 'upgrade_policy'>): Promise<void> => {
    await addModule(ctx, new PlanBook(ctx), { module: { upgrade_policy: 'together', ...manifest } });
  };

  beforeAll(async () => {
    ctx = t.ctx;
    await seatsPart.start(ctx, t.verbs);
    for (const name of NODES) {
      const { link } = await t.enrolOnOverlay(name);
      links.set(name, link);
      await t.nextDeclaration(link, name);
      const [row] = await ctx.store.query<{ overlay_address: string }>('SELECT overlay_address FROM nodes WHERE name = $1', [name]);
      address.set(name, row?.overlay_address as string);
    }
  }, 120_000);

  test('the resolver seat is known, replicated and unheld before anyone adds a holder', async () => {
    expect(await listed('mesh-dns-resolver')).toEqual({ seat: 'mesh-dns-resolver', replicated: true, holders: [], needed_by: [], what: expect.stringContaining('mesh names') });
  });

  test('a resolver holder runs the DNS server on its overlay address, and every node resolves through it alone', async () => {
    const added = await seat({ seat: 'mesh-dns-resolver', add: 'alpha' });
    expect(added.result.changed).toEqual(['added node alpha']);
    expect(added.result.sent.map((entry) => entry.node)).toEqual([...NODES]);
    const alpha = await latest('alpha');
    const config = fileText(alpha, RESOLVER_CONFIG_PATH) ?? '';
    expect(config).toContain(`listen-address=${address.get('alpha')}\n`);
    expect(config).toMatch(/^no-resolv$/m);
    expect(config).not.toMatch(/^server=/m);
    expect(alpha.resources).toEqual(expect.arrayContaining([{ shape: 'package', name: 'dnsmasq-base' }, { shape: 'service', name: 'mesh-dns-resolver', state: 'running', enabled: true }]));
    expect(alpha.roster).toEqual({ 'mesh-dns-resolver': ['alpha'] });
    const beta = await latest('beta');
    expect(fileText(beta, RESOLVER_CONFIG_PATH)).toBeUndefined();
    expect(nameservers(beta)).toEqual([address.get('alpha')]);
    await latest('gamma');
  });

  test('a replicated seat takes a second holder: the roster puts this machine first, resolv.conf lists both and nothing else', async () => {
    await seat({ seat: 'mesh-dns-resolver', add: 'beta' });
    const [alpha, beta, gamma] = [await latest('alpha'), await latest('beta'), await latest('gamma')];
    expect(alpha.roster).toEqual({ 'mesh-dns-resolver': ['alpha', 'beta'] });
    expect(beta.roster).toEqual({ 'mesh-dns-resolver': ['beta', 'alpha'] });
    expect(gamma.roster).toEqual({ 'mesh-dns-resolver': ['alpha', 'beta'] });
    expect(nameservers(beta)).toEqual([address.get('beta'), address.get('alpha')]);
    expect(nameservers(gamma)).toEqual([address.get('alpha'), address.get('beta')]);
    expect(fileText(beta, RESOLVER_CONFIG_PATH)).toContain(`listen-address=${address.get('beta')}\n`);
    expect((await listed('mesh-dns-resolver'))?.holders.map((holder) => [holder.node, holder.address, holder.by_hand])).toEqual([
      ['alpha', address.get('alpha'), true],
      ['beta', address.get('beta'), true],
    ]);
  });

  test('a second holder of a single seat is refused, naming the holder, by hand and at assign, and nothing is recorded', async () => {
    await seat({ seat: 'build-cache', add: 'alpha' });
    const refused = await seat({ seat: 'build-cache', add: 'beta' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SeatTaken);
    expect((refused as SeatTaken).message).toMatch(/held by node alpha and is not replicated, so node beta cannot hold it too/);
    expect((refused as SeatTaken).next).toMatch(/mesh-control seat build-cache --replicated/);

    await module({ name: 'cache-server', version: '1', resources: [], seats: { holds: ['build-cache'], needs: [] } });
    const atAssign = await assignModules(ctx, { node: 'gamma', modules: ['cache-server'] }).catch((error: unknown) => error);
    expect(atAssign).toBeInstanceOf(SeatTaken);
    expect(await ctx.store.query('SELECT 1 FROM module_assignments WHERE node = $1', ['gamma'])).toEqual([]);
    expect((await listed('build-cache'))?.holders.map((holder) => holder.node)).toEqual(['alpha']);
    // No roster for a single seat: the roster is for seats several hold.
    expect(Object.keys((await latest('gamma')).roster ?? {})).toEqual(['mesh-dns-resolver']);
  });

  test('a module needing a seat is assigned where a holder exists, and the last holder cannot go while it runs', async () => {
    await module({ name: 'builder', version: '1', resources: [], seats: { holds: [], needs: ['build-cache', 'artifact-store'] } });
    const unheld = await assignModules(ctx, { node: 'gamma', modules: ['builder'] }).catch((error: unknown) => error);
    expect(unheld).toBeInstanceOf(SeatNotHeld);
    expect((unheld as SeatNotHeld).next).toMatch(/mesh-control seat artifact-store --add NODE/);
    await seat({ seat: 'artifact-store', add: 'beta' });
    await assignModules(ctx, { node: 'gamma', modules: ['builder'] });
    const last = await seat({ seat: 'build-cache', remove: 'alpha' }).catch((error: unknown) => error);
    expect(last).toBeInstanceOf(SeatStillNeeded);
    expect((last as SeatStillNeeded).message).toBe('node alpha is the last holder of seat build-cache, which module builder on node gamma still needs; nothing was changed: "build-cache"');
    expect((await listed('build-cache'))?.needed_by).toEqual([{ module: 'builder', node: 'gamma' }]);
  });

  test('a replicated seat takes a holder through a module, and --single is refused while several hold it', async () => {
    await seat({ seat: 'build-cache', replicated: true });
    await assignModules(ctx, { node: 'gamma', modules: ['cache-server'] });
    expect((await listed('build-cache'))?.holders.map((holder) => [holder.node, holder.by_hand, holder.modules])).toEqual([
      ['alpha', true, []],
      ['gamma', false, ['cache-server']],
    ]);
    expect((await latest('beta')).roster).toEqual({ 'build-cache': ['alpha', 'gamma'], 'mesh-dns-resolver': ['beta', 'alpha'] });
    await expect(seat({ seat: 'build-cache', replicated: false })).rejects.toThrow(SeatHeldBySeveral);
    await expect(seat({ seat: 'build-cache', remove: 'gamma' })).rejects.toThrow(SeatHeldThroughModule);
    await expect(seat({ seat: 'build-cache', remove: 'beta' })).rejects.toThrow(SeatHolderNotFound);
    await expect(seat({ seat: 'build-cache' })).rejects.toThrow(SeatChangeUnclear);
  });

  test('the last holder through a module cannot be unassigned while something needs the seat, but can with what needs it', async () => {
    await seat({ seat: 'build-cache', remove: 'alpha' });
    const refused = await unassignModules(ctx, { node: 'gamma', modules: ['cache-server'] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SeatStillNeeded);
    expect((refused as SeatStillNeeded).message).toMatch(/module builder on node gamma still needs; nothing was unassigned/);
    expect(await ctx.store.query('SELECT module FROM module_assignments WHERE node = $1 ORDER BY module', ['gamma'])).toEqual([{ module: 'builder' }, { module: 'cache-server' }]);
    // Unassigning what needs it along with the holder is fine: nothing is left needing the seat.
    await unassignModules(ctx, { node: 'gamma', modules: ['cache-server', 'builder'] });
    expect((await listed('build-cache'))?.holders).toEqual([]);
  });

  test('a new revision of a running module that would make a second holder of a single seat is not registered', async () => {
    await module({ name: 'web', version: '1', resources: [] });
    await assignModules(ctx, { node: 'alpha', modules: ['web'] });
    await assignModules(ctx, { node: 'beta', modules: ['web'] });
    const refused = await module({ name: 'web', version: '2', resources: [], seats: { holds: ['front-door'], needs: [] } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SeatTaken);
    expect((refused as SeatTaken).message).toMatch(/module web's new revision holds it and runs on alpha, beta, so it was not registered/);
    const needing = await module({ name: 'web', version: '2', resources: [], seats: { holds: [], needs: ['front-door'] } }).catch((error: unknown) => error);
    expect(needing).toBeInstanceOf(SeatNotHeld);
    expect(await ctx.store.query('SELECT version FROM module_revisions WHERE name = $1', ['web'])).toEqual([{ version: '1' }]);
    await unassignModules(ctx, { node: 'alpha', modules: ['web'] });
    await unassignModules(ctx, { node: 'beta', modules: ['web'] });
  });

  test('resolver holders taken away: the others resolve through the one left, then the resolver configuration is handed back', async () => {
    for (const name of NODES) await latest(name).catch(() => undefined);
    await seat({ seat: 'mesh-dns-resolver', remove: 'alpha' });
    expect(nameservers(await latest('gamma'))).toEqual([address.get('beta')]);
    expect(fileText(await latest('alpha'), RESOLVER_CONFIG_PATH)).toBeUndefined();
    await seat({ seat: 'mesh-dns-resolver', remove: 'beta' });
    const gamma = await latest('gamma');
    expect(fileText(gamma, RESOLV_CONF_PATH)).toBeUndefined();
    expect(gamma.roster).toBeUndefined();
    const text = (await call('seats', {})).text;
    expect(text).toMatch(/^mesh-dns-resolver {2}replicated {2}no holder/m);
  });

  test('a resolver holder is refused where something else declares resolv.conf, naming both, and nothing is recorded', async () => {
    const own = { shape: 'file', path: RESOLV_CONF_PATH, content: { text: 'nameserver 192.0.2.53\n' }, mode: '0644', owner: 'root', group: 'root' } as const;
    await setDeclaredResources(ctx.store, 'gamma', [own], new Date());
    const refused = await seat({ seat: 'mesh-dns-resolver', add: 'alpha' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ModuleCollision);
    expect((refused as ModuleCollision).message).toBe('node declare and the seats both declare path:/etc/resolv.conf on node gamma; seat mesh-dns-resolver was not changed: "path:/etc/resolv.conf"');
    expect((await listed('mesh-dns-resolver'))?.holders).toEqual([]);
    await setDeclaredResources(ctx.store, 'gamma', [], new Date());
  });
});
