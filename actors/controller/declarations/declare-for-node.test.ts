import type { NatsConnection } from '@nats-io/transport-node';
import { resourceKey } from '../../../schema/resource';
import { useTestController, type TestMachine } from '../enrolment/testing/test-controller';
import { NodeNotFound } from '../store/node-not-found';
import { ModuleCollision } from '../modules/module-errors';
import { insertRevision, latestSend, setAssignment } from '../modules/modules.repo';
import { FileResource, PackageResource } from '../../../schema/resource';
import { DeclaredResourceReserved, NodeNotEnrolled, ShapeNotTakenByNode } from './declaration-errors';
import type { DeclareOutcome } from './declare-for-node';
import { assignModules } from '../modules/assign-modules';

const MOTD = { shape: 'file', path: '/etc/motd', content: { text: 'on the mesh\n' } };
const NGINX = { shape: 'package', name: 'nginx' };

describe('declaring what a node holds (node.declare)', () => {
  const t = useTestController('postgres');
  let machine: TestMachine;
  let node: NatsConnection;

  const declare = async (name: string, resources: unknown[]): Promise<DeclareOutcome> =>
    (await t.verbs.call(t.ctx, 'node.declare', { node: name, resources })).result as DeclareOutcome;

  beforeAll(async () => {
    const token = await t.issue();
    machine = t.machine('uniform');
    await t.enrol(token, t.requestFor(machine, token));
    node = await t.connectNode('uniform', machine);
  });

  test('before the overlay is applied, keeps the resources and sends nothing: the overlay comes first', async () => {
    const outcome = await declare('uniform', [MOTD]);
    expect(outcome).toMatchObject({ node: 'uniform', resources: 1, sent: null });
    expect(outcome.held).toMatch(/overlay/);
    const overlay = await t.nextDeclaration(node, 'uniform');
    expect(overlay.declaration.kind).toBe('overlay');
    expect(overlay.declaration.resources.map(resourceKey)).not.toContain('file:/etc/motd');

    await t.report(node, overlay, { sequence: 1, report_sequence: 1 });
    const full = await t.nextDeclaration(node, 'uniform');
    expect(full.declaration.kind).toBe('full');
    expect(full.declaration.resources.map(resourceKey)).toEqual([...overlay.declaration.resources.map(resourceKey), 'file:/etc/motd']);
    // Stored parsed: the file's defaults are in what was sent.
    expect(full.declaration.resources.at(-1)).toMatchObject({ mode: '0644', owner: 'root', group: 'root' });
  });

  test('once the overlay is applied, sends the full declaration at once and answers with its generation', async () => {
    await t.overlayApplied('uniform');
    const outcome = await declare('uniform', [MOTD, NGINX]);
    expect(outcome.held).toBeNull();
    const full = await t.nextDeclaration(node, 'uniform');
    expect(full.declaration).toMatchObject({ kind: 'full', generation: outcome.sent?.generation });
    expect(full.digest).toBe(outcome.sent?.digest);
    expect(full.declaration.resources.map(resourceKey).slice(-2)).toEqual(['file:/etc/motd', 'package:nginx']);
    const [sent] = await t.ctx.store.query<{ kind: string; digest: string; epoch: number }>('SELECT kind, digest, epoch FROM declarations WHERE node = $1 AND generation = $2', ['uniform', full.declaration.generation]);
    expect(sent).toEqual({ kind: 'full', digest: full.digest, epoch: 3 });
  });

  test('refuses for an episodic node the shapes it does not take, naming them, and records nothing', async () => {
    const phone = t.machine('phone', 'none');
    phone.profile = { ...phone.profile, host_kind: 'episodic' };
    const token = await t.issue();
    await t.enrol(token, t.requestFor(phone, token));
    const refused = declare('phone', [MOTD, NGINX, { shape: 'service', name: 'sshd', state: 'running', enabled: true }]);
    await expect(refused).rejects.toBeInstanceOf(ShapeNotTakenByNode);
    await expect(refused).rejects.toThrow(/episodic host, which takes only file, directory, action: package:nginx, service:sshd would be refused there; nothing was declared/);
    const [row] = await t.ctx.store.query<{ declared_resources: unknown[] }>('SELECT declared_resources FROM nodes WHERE name = $1', ['phone']);
    expect(row?.declared_resources ?? []).toHaveLength(0);
    expect(await declare('phone', [MOTD])).toMatchObject({ node: 'phone', resources: 1 });

    const web = { name: 'web-for-phone', version: '1.0', upgrade_policy: 'record' as const, digest: 'b'.repeat(64), source: null, added_at: new Date() };
    await insertRevision(t.ctx.store, { ...web, resources: [FileResource.parse(MOTD), PackageResource.parse(NGINX)] });
    await expect(assignModules(t.ctx, { node: 'phone', modules: ['web-for-phone'] })).rejects.toThrow(/package:nginx would be refused there; nothing was assigned/);
    expect(await t.ctx.store.query('SELECT 1 FROM module_assignments WHERE node = $1', ['phone'])).toHaveLength(0);
  });

  test('refuses a resource the overlay writes, and keeps what was declared before', async () => {
    const clash = { shape: 'file', path: '/etc/wireguard/mesh0.conf', content: { text: '' } };
    await expect(declare('uniform', [clash])).rejects.toBeInstanceOf(DeclaredResourceReserved);
    const [row] = await t.ctx.store.query<{ declared_resources: unknown[] }>('SELECT declared_resources FROM nodes WHERE name = $1', ['uniform']);
    expect(row?.declared_resources).toHaveLength(2);
  });

  test('refuses a resource one of the node\'s modules declares, naming the module, and records the modules a declaration carried', async () => {
    const banner = FileResource.parse({ shape: 'file', path: '/etc/banner', content: { text: 'from the module\n' } });
    await insertRevision(t.ctx.store, { name: 'banner', version: '1.0', upgrade_policy: 'record', resources: [banner], digest: 'a'.repeat(64), source: null, added_at: new Date() });
    await setAssignment(t.ctx.store, 'uniform', 'banner', '1.0', new Date());

    const clash = declare('uniform', [MOTD, { shape: 'file', path: '/etc/banner', content: { text: 'by hand\n' } }]);
    await expect(clash).rejects.toBeInstanceOf(ModuleCollision);
    await expect(clash).rejects.toThrow(/module banner 1\.0/);
    const [row] = await t.ctx.store.query<{ declared_resources: unknown[] }>('SELECT declared_resources FROM nodes WHERE name = $1', ['uniform']);
    expect(row?.declared_resources).toHaveLength(2);

    const outcome = await declare('uniform', [MOTD]);
    const full = await t.nextDeclaration(node, 'uniform');
    expect(full.declaration.generation).toBe(outcome.sent?.generation);
    expect(full.declaration.resources.map(resourceKey).slice(-2)).toEqual(['file:/etc/motd', 'file:/etc/banner']);
    expect(await latestSend(t.ctx.store, 'uniform')).toMatchObject({ generation: outcome.sent?.generation, modules: { modules: { banner: '1.0' } } });
  });

  test('refuses a node that does not exist, or one with no identity', async () => {
    await expect(declare('nobody', [MOTD])).rejects.toBeInstanceOf(NodeNotFound);
    await t.ctx.store.query("INSERT INTO nodes (name, lifecycle_state) VALUES ('victor', 'revoked')");
    await expect(declare('victor', [MOTD])).rejects.toBeInstanceOf(NodeNotEnrolled);
  });

  test('refuses resources that do not match the contract, naming the argument', async () => {
    await expect(t.verbs.call(t.ctx, 'node.declare', { node: 'uniform', resources: [{ shape: 'file', path: 'relative' }] })).rejects.toThrow(/resources/);
  });
});
