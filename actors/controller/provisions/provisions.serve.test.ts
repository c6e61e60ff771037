import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { ModuleManifest } from '../../../schema/module';
import type { FileResource } from '../../../schema/resource';
import { openSealed } from '../../shared/crypto/seal';
import type { ControllerContext } from '../controller-context';
import { eventually, useTestController, type ReadDeclaration, type TestMachine } from '../enrolment/testing/test-controller';
import { addModule } from '../modules/add-module';
import { assignModules } from '../modules/assign-modules';
import { unassignModules } from '../modules/unassign-modules';
import { pushNodes } from '../modules/push-nodes';
import { PlanBook } from '../plans/plan-book';
import { secretsPart } from '../secrets/secrets.part';
import { composeStatus } from '../status/compose-status';
import { CredentialPathTaken, ProviderStillNeeded, ProvisionUnprovided } from './provision-errors';
import { unsealableCredentialProblems } from './provider-standing';
import { revokeNode } from '../release/revoke-node';
import { provisionsPart, type ProvisionsListing } from './provisions.part';
import type { Rotated } from './rotate-provision';
import { retireConfirmedCredentials } from './retire-credentials';

// Provisions through the serving controller's verbs, over a real broker and PostgreSQL: a
// consumer refused while nothing provides, credentials issued per module per machine and sealed
// to each, the provider sealed the list it accepts, a rotation that replaces exactly the one
// asked, a failing provider named by status until it recovers, and a secret's new version sent
// to the node that uses it. The values are then looked for in every table and log line.

const DB = ModuleManifest.parse({
  name: 'db',
  version: '1',
  resources: [{ shape: 'service', name: 'postgresql', state: 'running', enabled: true, restart_on: ['/etc/db/accepted'] }],
  provides: [{ provision: 'app-database', path: '/etc/db/accepted', owner: 'postgres', group: 'postgres', mode: '0640' }],
});
const consumer = (name: string): ModuleManifest =>
  ModuleManifest.parse({
    name,
    version: '1',
    resources: [{ shape: 'service', name, state: 'running', enabled: true, restart_on: [`/etc/${name}/db-credential`] }],
    consumes: [{ provision: 'app-database', path: `/etc/${name}/db-credential`, owner: name }],
  });

describe('provisions: credentials per consumer, sealed, rotated narrowly', () => {
  const t = useTestController('postgres');
  let keys: string;
  let ctx: ControllerContext;
  const machines = new Map<string, TestMachine>();
  const links = new Map<string, NatsConnection>();
  const values: string[] = [];

  const call = async <R>(verb: string, args: Record<string, unknown>): Promise<{ result: R; text: string }> => {
    const answer = await t.verbs.call(ctx, verb, args);
    return { result: answer.result as R, text: answer.text };
  };
  const lastRead = new Map<string, ReadDeclaration>();
  const latest = async (node: string): Promise<ReadDeclaration> => {
    const read = await t.nextDeclaration(links.get(node) as NatsConnection, node);
    lastRead.set(node, read);
    return read;
  };
  const opened = (read: ReadDeclaration, node: string, file: string): string => {
    const found = read.declaration.resources.find((r): r is FileResource => r.shape === 'file' && r.path === file);
    if (found === undefined || !('sealed' in found.content)) throw new Error(`${node}'s declaration carries no sealed ${file}`);
    const text = Buffer.from(openSealed(found.content.sealed.box, (machines.get(node) as TestMachine).identity.secret_key)).toString('utf8');
    return text;
  };
  const boxOf = (read: ReadDeclaration, file: string): string | undefined => {
    const found = read.declaration.resources.find((r): r is FileResource => r.shape === 'file' && r.path === file);
    return found !== undefined && 'sealed' in found.content ? found.content.sealed.box : undefined;
  };
  const generations = async (node: string): Promise<number> => Number((await ctx.store.query<{ n: string }>('SELECT count(*) AS n FROM declarations WHERE node = $1', [node]))[0]?.n);

  beforeAll(async () => {
    keys = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-provision-keys-'));
    // The store key lies beside the signing key file: the serving parts (reports among them,
    // which send a provider its list once a consumer applied a rotated credential) read it too.
    (t.ctx.config.controller as { signing_key_file: string }).signing_key_file = path.join(keys, 'controller-signing.key');
    ctx = t.ctx;
    await provisionsPart.start(ctx, t.verbs);
    await secretsPart.start(ctx, t.verbs);
    for (const name of ['pg', 'kilo', 'lima']) {
      const token = await t.issue();
      const machine = t.machine(name);
      machines.set(name, machine);
      await t.enrol(token, t.requestFor(machine, token));
      const link = await t.connectNode(name, machine);
      links.set(name, link);
    }
    // Every node's latest overlay (each enrolment changed the others') reported applied.
    for (const [name, link] of links) {
      await t.report(link, await t.nextDeclaration(link, name), { sequence: 1, report_sequence: 1 });
      await t.overlayApplied(name);
    }
    for (const manifest of [DB, consumer('app'), consumer('worker')]) await addModule(ctx, new PlanBook(ctx), { module: manifest });
  });
  afterAll(async () => {
    await fs.rm(keys, { recursive: true, force: true });
  });

  test('refuses a consumer while no node provides, naming the provision and the module that would', async () => {
    const refused = await assignModules(ctx, { node: 'kilo', modules: ['app'] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProvisionUnprovided);
    expect((refused as ProvisionUnprovided).message).toMatch(/module app on node kilo consumes the provision app-database, and no node of the mesh provides it \(module db offers it\)/);
    expect((refused as ProvisionUnprovided).next).toMatch(/mesh-control assign NODE db/);
    expect(await ctx.store.query('SELECT 1 FROM module_assignments WHERE node = $1', ['kilo'])).toEqual([]);
  });

  test('issues one credential per module per machine, sealed to it, and seals the provider the list', async () => {
    await assignModules(ctx, { node: 'pg', modules: ['db'] });
    const kilo = await assignModules(ctx, { node: 'kilo', modules: ['app', 'worker'] });
    expect(kilo.providers).toEqual([expect.objectContaining({ node: 'pg', held: null })]);
    await assignModules(ctx, { node: 'lima', modules: ['app'] });

    const kiloRead = await latest('kilo');
    const kiloApp = opened(kiloRead, 'kilo', '/etc/app/db-credential');
    const kiloWorker = opened(kiloRead, 'kilo', '/etc/worker/db-credential');
    const limaApp = opened(await latest('lima'), 'lima', '/etc/app/db-credential');
    values.push(kiloApp, kiloWorker, limaApp);
    expect(new Set(values).size).toBe(3);
    for (const value of values) expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(kiloRead.declaration.resources.find((r) => r.shape === 'file' && r.path === '/etc/app/db-credential')).toMatchObject({ owner: 'app', group: 'root', mode: '0600' });
    // Another machine's key does not open kilo's credential.
    expect(() => opened(kiloRead, 'lima', '/etc/app/db-credential')).toThrow(/sealed to another key/);

    const accepted = opened(await latest('pg'), 'pg', '/etc/db/accepted');
    expect(accepted.split('\n')).toEqual([`kilo app ${kiloApp}`, `kilo worker ${kiloWorker}`, `lima app ${limaApp}`, '']);
  });

  test('rotate --consumer --module replaces that one credential; the rest keep their very boxes', async () => {
    const before = { lima: await generations('lima') };
    const kiloWorkerBox = (await ctx.store.query<{ box: string }>("SELECT box FROM provision_seals WHERE node = 'kilo' AND path = '/etc/worker/db-credential'"))[0]?.box;
    const limaBox = (await ctx.store.query<{ box: string }>("SELECT box FROM provision_seals WHERE node = 'lima'"))[0]?.box;

    await expect(call('rotate', { provision: 'app-database', consumer: 'kilo', module: 'app' })).rejects.toThrow(/--why/);
    const rotated = await call<Rotated>('rotate', { provision: 'app-database', consumer: 'kilo', module: 'app', why: 'printed in a crash log' });
    expect(rotated.result.rotated).toEqual([expect.objectContaining({ node: 'kilo', module: 'app', version: 2 })]);
    expect(rotated.result.told.map((told) => told.node)).toEqual(['pg', 'kilo']);

    const kiloRead = await latest('kilo');
    const newValue = opened(kiloRead, 'kilo', '/etc/app/db-credential');
    values.push(newValue);
    expect(newValue).not.toBe(values[0]);
    expect(boxOf(kiloRead, '/etc/worker/db-credential')).toBe(kiloWorkerBox);
    expect(await generations('lima')).toBe(before.lima);
    expect((await ctx.store.query<{ box: string }>("SELECT box FROM provision_seals WHERE node = 'lima'"))[0]?.box).toBe(limaBox);
    // No outage window: the provider accepts the old credential beside the new one.
    const accepted = opened(await latest('pg'), 'pg', '/etc/db/accepted');
    expect(accepted.split('\n')).toEqual([`kilo app ${values[0]}`, `kilo app ${newValue}`, `kilo worker ${values[1]}`, `lima app ${values[2]}`, '']);
    expect(await ctx.store.query("SELECT verb, subject, why FROM hand_acts WHERE verb = 'rotate'")).toEqual([
      { verb: 'rotate', subject: 'app-database consumer kilo module app', why: 'printed in a crash log' },
    ]);
    await expect(call('rotate', { provision: 'app-database', consumer: 'pg', why: 'x' })).rejects.toThrow(/no credential of the provision app-database is issued on node pg/);
  });

  test('the old credential stays accepted until the consumer reports the new one applied', async () => {
    const kilo = links.get('kilo') as NatsConnection;
    const read = lastRead.get('kilo') as ReadDeclaration;
    const pgBefore = await generations('pg');
    const retiring = () => ctx.store.query("SELECT module, version FROM provision_retiring_credentials WHERE node = 'kilo'");

    // The credential file failed on kilo: it may still hold the old one, which stays accepted.
    const failed = await t.report(kilo, read, { sequence: 5, report_sequence: 5 }, 'failed');
    await eventually(async () => ((await ctx.store.query("SELECT 1 FROM reports WHERE node = 'kilo' AND report_sequence = 5")).length === 1 ? true : undefined), "kilo's failed report to be kept");
    await t.settled();
    expect(await retireConfirmedCredentials(ctx, failed)).toEqual({ consumers: [], told: [] });
    expect(await retiring()).toEqual([{ module: 'app', version: 1 }]);
    expect(await generations('pg')).toBe(pgBefore);
    const listing = await call<ProvisionsListing>('provisions', {});
    expect(listing.result.credentials.find((c) => c.node === 'kilo' && c.module === 'app')).toMatchObject({ version: 2, still_accepted: [1] });
    expect(listing.text).toContain('app on kilo, version 2, issued');
    expect(listing.text).toMatch(/with version 1 until kilo reports the new one applied/);

    // Applied: the provider is sent its list without the old credential.
    await t.report(kilo, read, { sequence: 6, report_sequence: 6 }, 'applied');
    await eventually(async () => ((await retiring()).length === 0 ? true : undefined), 'the old credential to be dropped');
    await eventually(async () => ((await generations('pg')) > pgBefore ? true : undefined), 'pg to be sent its new list');
    const accepted = opened(await latest('pg'), 'pg', '/etc/db/accepted');
    expect(accepted.split('\n')).toEqual([`kilo app ${values[3]}`, `kilo worker ${values[1]}`, `lima app ${values[2]}`, '']);
    expect(accepted).not.toContain(values[0] as string);
    expect((await call<ProvisionsListing>('provisions', {})).result.credentials.find((c) => c.node === 'kilo' && c.module === 'app')?.still_accepted).toEqual([]);
  });

  test('refuses taking off the last provider while consumers hold credentials', async () => {
    await expect(unassignModules(ctx, { node: 'pg', modules: ['db'] })).rejects.toThrow(ProviderStillNeeded);
    expect(await ctx.store.query("SELECT 1 FROM module_assignments WHERE node = 'pg' AND module = 'db'")).toHaveLength(1);
  });

  test('status names a failing provider and its consumers until a report has it running', async () => {
    const pg = links.get('pg') as NatsConnection;
    const status = () => composeStatus({ store: ctx.store, gate: ctx.lease as never ?? ({ standing: () => ({ state: 'acting', epoch: 1, note: null }) } as never), leaseHolder: async () => null, tree: () => undefined, controller: 'test', now: () => new Date() });
    const read = lastRead.get('pg') as ReadDeclaration;
    await t.report(pg, read, { sequence: 10, report_sequence: 10 }, 'failed');
    const failing = await eventually(async () => (await status()).problems.find((p) => p.kind === 'provision'), 'the failing provider in status');
    expect(failing).toMatchObject({ subject: 'app-database@pg', detail: expect.stringMatching(/provider db on pg of app-database is failing .*service:postgresql.*its consumers: app on kilo, worker on kilo, app on lima/) });
    const listing = await call<ProvisionsListing>('provisions', {});
    expect(listing.result.providers).toEqual([expect.objectContaining({ provision: 'app-database', node: 'pg', standing: 'failing' })]);
    expect(listing.text).toMatch(/app-database: db on pg, failing/);

    await t.report(pg, read, { sequence: 10, report_sequence: 11 }, 'applied');
    await eventually(async () => ((await status()).problems.some((p) => p.kind === 'provision') ? undefined : true), 'the provider to recover in status');
    expect((await call<ProvisionsListing>('provisions', {})).result.providers[0]?.standing).toBe('well');
  });

  test('a new version of a secret is sent at once to the node whose module names it', async () => {
    const vault = ModuleManifest.parse({ name: 'vault', version: '1', resources: [{ shape: 'file', path: '/etc/vault/token', content: { secret: 'token' }, owner: 'vault', mode: '0600' }] });
    await call('secret.set', { module: 'vault', name: 'token', value_base64: Buffer.from('secret-one-Zq81').toString('base64') });
    await addModule(ctx, new PlanBook(ctx), { module: vault });
    await assignModules(ctx, { node: 'lima', modules: ['vault'] });
    await latest('lima');
    const kiloBefore = await generations('kilo');
    const set = await call<{ version: number; sent: Array<{ node: string; generation: number | null }> }>('secret.set', { module: 'vault', name: 'token', value_base64: Buffer.from('secret-two-Zq81').toString('base64') });
    expect(set.result.sent).toEqual([expect.objectContaining({ node: 'lima', generation: expect.any(Number) })]);
    expect(set.text).toMatch(/node lima: sent it sealed to its key, generation \d+/);
    expect(opened(await latest('lima'), 'lima', '/etc/vault/token')).toBe('secret-two-Zq81');
    expect(await generations('kilo')).toBe(kiloBefore);
  });

  test('no credential value is in any table of the store or any log line', async () => {
    const tables = await ctx.store.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    expect(values.length).toBe(4);
    for (const { table_name } of tables) {
      const rows = await ctx.store.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
      for (const value of values) expect(rows.filter((row) => row.row.includes(value)).map(() => table_name)).toEqual([]);
    }
    for (const value of values) expect(t.logs.filter((line) => line.includes(value))).toEqual([]);
  });

  test('refuses a consumer whose credential file lands on a path another module declares', async () => {
    const squatter = ModuleManifest.parse({ name: 'squatter', version: '1', resources: [{ shape: 'file', path: '/etc/worker/db-credential', content: { text: 'mine' } }] });
    await addModule(ctx, new PlanBook(ctx), { module: squatter });
    const refused = await assignModules(ctx, { node: 'lima', modules: ['squatter', 'worker'] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CredentialPathTaken);
    expect((refused as Error).message).toMatch(/the app-database credential of module worker would write its credential file \/etc\/worker\/db-credential, which module squatter 1 declares too/);
    expect(await ctx.store.query("SELECT module FROM module_assignments WHERE node = 'lima' ORDER BY module")).toEqual([{ module: 'app' }, { module: 'vault' }]);
  });

  test('a dead key is named with each credential file the mesh can no longer seal to it', async () => {
    await revokeNode(ctx, 'lima', 'lost');
    expect(await unsealableCredentialProblems(ctx.store)).toEqual([
      { kind: 'provision', subject: 'lima', detail: expect.stringMatching(/can no longer seal provision credentials to node lima, whose key is dead: \/etc\/app\/db-credential; enrol it again \(mesh-control token issue --node lima/) },
    ]);
  });

  test('a consumer on its provider\'s own node is in the list sealed with it, whatever the modules\' order', async () => {
    // worker sorts after db: its credential is issued in the same composition as db's list.
    await assignModules(ctx, { node: 'pg', modules: ['worker'] });
    const read = await latest('pg');
    const credential = opened(read, 'pg', '/etc/worker/db-credential');
    expect(opened(read, 'pg', '/etc/db/accepted')).toContain(`pg worker ${credential}\n`);
  });

  test('a revision that begins to consume, pushed, has its provider sent the new list at once', async () => {
    const book = new PlanBook(ctx);
    await addModule(ctx, book, { module: ModuleManifest.parse({ name: 'late', version: '1', upgrade_policy: 'record', resources: [] }) });
    await assignModules(ctx, { node: 'kilo', modules: ['late'] });
    const consuming = { ...consumer('late'), version: '2', upgrade_policy: 'record' as const };
    await addModule(ctx, book, { module: consuming });
    const pushed = await pushNodes(ctx, book, { node: 'kilo' });
    expect(pushed.nodes[0]?.moved).toEqual([{ module: 'late', from: '1', to: '2' }]);
    const credential = opened(await latest('kilo'), 'kilo', '/etc/late/db-credential');
    expect(opened(await latest('pg'), 'pg', '/etc/db/accepted')).toContain(`kilo late ${credential}\n`);
  });

  test('a consumer taken off loses its credential, and its provider stops accepting it at once', async () => {
    const taken = await unassignModules(ctx, { node: 'kilo', modules: ['worker'] });
    expect(taken.providers).toEqual([expect.objectContaining({ node: 'pg', held: null })]);
    expect(await ctx.store.query("SELECT 1 FROM provision_credentials WHERE node = 'kilo' AND module = 'worker'")).toEqual([]);
    const accepted = opened(await latest('pg'), 'pg', '/etc/db/accepted');
    expect(accepted).not.toContain('kilo worker ');
    expect(accepted).toContain('kilo app ');
  });
});
