import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import type { FileResource } from '../../../schema/resource';
import { openSealed } from '../../shared/crypto/seal';
import type { ControllerContext } from '../controller-context';
import { useTestController, type TestMachine } from '../enrolment/testing/test-controller';
import { addModule } from '../modules/add-module';
import { assignModules } from '../modules/assign-modules';
import { insertRevision } from '../modules/modules.repo';
import { pushNodes } from '../modules/push-nodes';
import { PlanBook } from '../plans/plan-book';
import { revokeNode } from '../release/revoke-node';
import { issueEnrolmentToken } from '../tokens/issue-enrolment-token';
import type { SecretChanged, SecretListed } from './keep-secret';
import { NodeKeyDead, SecretNotSet, SecretStillNamed, SecretStoreKeyUnusable, SecretValueEmpty, SecretValueTooLarge } from './secret-errors';
import { sealModuleSecrets } from './seal-for-node';
import { secretsPart } from './secrets.part';
import { unsealableProblems } from './unsealable-problems';
import { storeKeyFile } from './secret-store-key';

// Secrets through the serving controller's verbs, over a real broker and PostgreSQL: set, list,
// sealed into a node's declaration and opened with the node's own key, and the value looked
// for in every table of the store. Then the node's key dies, and each item is named.

const VALUE = 'pw-7Tq2-kept-only-sealed';
const SECRET_FILE = { shape: 'file', path: '/etc/app/db-password', content: { secret: 'db-password' }, mode: '0640', owner: 'app', group: 'app' } as const;

describe('secrets kept by the controller and sealed to a node', () => {
  const t = useTestController('postgres');
  let keys: string;
  let ctx: ControllerContext;
  let machine: TestMachine;
  let node: NatsConnection;

  const call = async <R>(verb: string, args: Record<string, unknown>): Promise<{ result: R; text: string }> => {
    const answer = await t.verbs.call(ctx, verb, args);
    return { result: answer.result as R, text: answer.text };
  };
  const set = (value: string | Buffer, name = 'db-password') =>
    call<SecretChanged>('secret.set', { module: 'app', name, value_base64: Buffer.from(value).toString('base64') });

  beforeAll(async () => {
    keys = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-secret-keys-'));
    // The store key goes beside the signing key: here a temporary directory.
    ctx = { ...t.ctx, config: { ...t.ctx.config, controller: { ...t.ctx.config.controller, signing_key_file: path.join(keys, 'controller-signing.key') } } };
    await secretsPart.start(ctx, t.verbs);
    const token = await t.issue();
    machine = t.machine('kilo');
    await t.enrol(token, t.requestFor(machine, token));
    node = await t.connectNode('kilo', machine);
    await t.report(node, await t.nextDeclaration(node, 'kilo'), { sequence: 1, report_sequence: 1 });
    await t.overlayApplied('kilo');
    await t.nextDeclaration(node, 'kilo');
    await insertRevision(ctx.store, { name: 'app', version: '1', upgrade_policy: 'together', resources: [FileResourceOf(SECRET_FILE)], digest: 'a'.repeat(64), source: null, added_at: new Date() });
  });
  afterAll(async () => {
    await fs.rm(keys, { recursive: true, force: true });
  });

  test('refuses to assign a module whose secret is not set, naming the command, and assigns nothing', async () => {
    const refused = await assignModules(ctx, { node: 'kilo', modules: ['app'] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SecretNotSet);
    expect((refused as SecretNotSet).next).toMatch(/mesh-control secret set app db-password/);
    expect(await ctx.store.query('SELECT 1 FROM module_assignments WHERE node = $1', ['kilo'])).toEqual([]);
  });

  test('refuses an empty value and one over the bound, keeping nothing, and makes the store key 0600 on first use', async () => {
    await expect(set('')).rejects.toThrow(SecretValueEmpty);
    await expect(set(Buffer.alloc(64 * 1024 + 1, 1))).rejects.toThrow(SecretValueTooLarge);
    expect(await ctx.store.query('SELECT 1 FROM secrets')).toEqual([]);
    const first = await set(VALUE);
    expect(first.result).toEqual({ module: 'app', name: 'db-password', version: 1, bytes: VALUE.length, changed: true, sent: [] });
    expect(first.text).not.toContain(VALUE);
    expect((await fs.stat(storeKeyFile(ctx.config))).mode & 0o777).toBe(0o600);
  });

  test('seals the value to the node in its declaration, which only the node key opens', async () => {
    const assigned = await assignModules(ctx, { node: 'kilo', modules: ['app'] });
    expect(assigned.sent).not.toBeNull();
    const read = await t.nextDeclaration(node, 'kilo');
    const file = read.declaration.resources.find((resource): resource is FileResource => resource.shape === 'file' && resource.path === '/etc/app/db-password');
    if (file === undefined || !('sealed' in file.content)) throw new Error('the declaration carries no sealed file');
    expect(file).toMatchObject({ owner: 'app', group: 'app', mode: '0640', content: { sealed: { secret: 'app/db-password', version: 1 } } });
    const { box } = file.content.sealed;
    expect(Buffer.from(openSealed(box, machine.identity.secret_key)).toString('utf8')).toBe(VALUE);
    expect(() => openSealed(box, t.machine('other').identity.secret_key)).toThrow(/sealed to another key/);
    expect(JSON.stringify(read.declaration)).not.toContain(VALUE);
  });

  test('refuses a new revision naming a secret not set while nodes run the module, registering nothing', async () => {
    const file = { ...FileResourceOf(SECRET_FILE), path: '/etc/app/api-key', content: { secret: 'api-key' } };
    const manifest = { name: 'app', version: '2', upgrade_policy: 'together' as const, resources: [FileResourceOf(SECRET_FILE), file] };
    const refused = await addModule(ctx, new PlanBook(ctx), { module: manifest }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SecretNotSet);
    expect((refused as SecretNotSet).message).toMatch(/app\/api-key is not set, and module app's file \/etc\/app\/api-key names it/);
    expect(await ctx.store.query('SELECT version FROM module_revisions WHERE name = $1', ['app'])).toEqual([{ version: '1' }]);
  });

  test('a push composes the same box again: nothing reads as changed on the node', async () => {
    const before = await ctx.store.query<{ box: string }>('SELECT box FROM secret_seals WHERE node = $1', ['kilo']);
    await pushNodes(ctx, new PlanBook(ctx), { node: 'kilo' });
    const read = await t.nextDeclaration(node, 'kilo');
    const file = read.declaration.resources.find((resource) => resource.shape === 'file' && resource.path === '/etc/app/db-password') as FileResource;
    expect(file.content).toEqual({ sealed: { secret: 'app/db-password', version: 1, box: before[0]?.box } });
  });

  test('lists names, versions and sizes, never the value; the database alone holds it nowhere', async () => {
    const listed = await call<{ secrets: SecretListed[] }>('secret.list', {});
    expect(listed.result.secrets).toEqual([expect.objectContaining({ module: 'app', name: 'db-password', version: 1, bytes: VALUE.length, cannot_seal_to: [] })]);
    expect(listed.text).toMatch(/^app\/db-password {2}version 1 {2}\d+ bytes {2}set /);
    const tables = await ctx.store.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    for (const { table_name } of tables) {
      const rows = await ctx.store.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
      expect(rows.filter((row) => row.row.includes(VALUE) || row.row.includes(Buffer.from(VALUE).toString('base64')))).toEqual([]);
    }
    expect(t.logs.filter((line) => line.includes(VALUE))).toEqual([]);
  });

  test('another store key is refused by name, not taken for a damaged value', async () => {
    const file = storeKeyFile(ctx.config);
    const kept = await fs.readFile(file);
    await fs.rm(file);
    await expect(set('second')).rejects.toThrow(SecretStoreKeyUnusable);
    await fs.writeFile(file, kept, { mode: 0o600 });
  });

  test('refuses to unset a secret a running module names, saying what to do first', async () => {
    const refused = await call('secret.unset', { module: 'app', name: 'db-password' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SecretStillNamed);
    expect((refused as SecretStillNamed).message).toMatch(/named by module app 1 on node kilo/);
    expect(await ctx.store.query('SELECT version FROM secrets WHERE module = $1', ['app'])).toEqual([{ version: 1 }]);
    const unused = await set('spare', 'spare');
    expect(unused.result.version).toBe(1);
    expect((await call<SecretChanged>('secret.unset', { module: 'app', name: 'spare' })).result).toMatchObject({ changed: true, version: null });
  });

  test('a dead key is told item by item, and nothing is sealed to it', async () => {
    const issued = await issueEnrolmentToken(ctx, { forNode: 'kilo', ttlMs: 60_000 });
    expect(issued.cannot_seal_to?.sealed).toEqual(['app/db-password version 1 for /etc/app/db-password']);
    const listed = await call<{ secrets: SecretListed[] }>('secret.list', { module: 'app' });
    expect(listed.result.secrets[0]?.cannot_seal_to).toEqual([expect.objectContaining({ node: 'kilo', path: '/etc/app/db-password', version: 1, reason: 'reissued' })]);
    expect(listed.text).toMatch(/can no longer seal to these.*\n {2}kilo: app\/db-password version 1 for \/etc\/app\/db-password/);
    expect(await unsealableProblems(ctx.store)).toEqual([
      { kind: 'secret', subject: 'kilo', detail: expect.stringMatching(/^the mesh can no longer seal to node kilo, whose key is dead: app\/db-password version 1 for \/etc\/app\/db-password; enrol it again \(mesh-control token issue --node kilo/) },
    ]);
    // A new value cannot go to it either: composition refuses before anything is sent.
    await set('rotated');
    await expect(pushNodes(ctx, new PlanBook(ctx), { node: 'kilo' })).rejects.toThrow(/node kilo is revoked/);
    const sealing = sealModuleSecrets(ctx, 'kilo', [{ module: 'app', resources: [FileResourceOf(SECRET_FILE)] }]);
    await expect(sealing).rejects.toThrow(NodeKeyDead);
    await expect(sealing).rejects.toMatchObject({ items: ['app/db-password for /etc/app/db-password'], next: expect.stringMatching(/token issue --node kilo/) });
    expect(await ctx.store.query('SELECT version FROM secret_seals WHERE node = $1', ['kilo'])).toEqual([{ version: 1 }]);
  });

  test('revoking a node names each secret it can no longer be sealed', async () => {
    const token = await t.issue();
    const lima = t.machine('lima');
    await t.enrol(token, t.requestFor(lima, token));
    await ctx.store.query(`INSERT INTO secret_seals (node, module, name, version, public_key, box, path, sealed_at) VALUES ('lima', 'app', 'db-password', 2, $1, 'eA==', '/etc/app/db-password', now())`, [lima.identity.public_key]);
    const outcome = await revokeNode(ctx, 'lima', 'lost');
    expect(outcome.credentials.filter((c) => c.kind === 'sealed_secret')).toEqual([
      expect.objectContaining({ id: 'app/db-password version 2 for /etc/app/db-password', state: 'unsealable' }),
    ]);
  });
});

function FileResourceOf(input: typeof SECRET_FILE): FileResource {
  return { ...input, content: { secret: input.content.secret } };
}
