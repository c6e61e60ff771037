import { promises as fs } from 'node:fs';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import {
  connect,
  nkeyAuthenticator,
  usernamePasswordAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import {
  DECLARATION_STREAM,
  enrolmentInboxPrefix,
  enrolmentSubject,
  enrolmentUserName,
  nodeInboxPrefix,
  OPERATOR_INBOX_PREFIX,
} from '../../shared/bus/subjects';
import { brokerPasswordFor, decodeBase64, decodeToken, generateNodeIdentity, generateSigningKeyPair, nkeySeedOf, writeKeyFile } from '../../shared/crypto';
import { callController } from '../control/call-controller';
import { ControllerNotRunning, ControllerRefused } from '../control/control-errors';
import { readNkeySeedFile } from '../config/nkey-seed-file';
import { nodesPart } from '../nodes/nodes.part';
import { getNode, recordLastSeen, upsertNode } from '../store/nodes.repo';
import { getToken } from '../store/tokens.repo';
import { sweepExpiredTokens } from '../tokens/sweep-expired-tokens';
import { tokensPart } from '../tokens/tokens.part';
import { openController } from './open-controller';
import { serveController, type ServingController } from './serve-controller';
import { useTestMesh } from './testing/use-test-mesh';

// The serving controller over a real broker (TLS, nkey users, reloads) made by initMesh, on a
// real PostgreSQL, called the way the CLI calls it. Only this file's parts run, so what is
// asserted here is the foundation's behaviour, not a colleague part's.

const PARTS = [tokensPart, nodesPart];

const suite = useTestMesh();

describe('serveController on PostgreSQL', () => {
  let serving: ServingController;
  const log: string[] = [];
  const opened: NatsConnection[] = [];

  beforeAll(async () => {
    serving = await serveController(suite.mesh.dir, { parts: PARTS, log: (line) => log.push(line) });
  }, 30_000);

  afterAll(async () => {
    await Promise.allSettled(opened.map((connection) => connection.close()));
    await serving?.stop();
  });

  async function open(options: NodeConnectionOptions): Promise<NatsConnection> {
    const connection = await connect({ servers: suite.mesh.config.broker.url, tls: { ca: suite.mesh.certPem }, reconnect: false, ...options });
    opened.push(connection);
    return connection;
  }

  /** Settles true when the connection is closed within `ms`, false when it is still open. */
  async function closedWithin(connection: NatsConnection, ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([connection.closed().then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  test('answers nodes.list from the CLI\'s side with the nodes as facts', async () => {
    const now = serving.ctx.now();
    const identity = generateNodeIdentity();
    await upsertNode(serving.ctx.store, { name: 'kitchen', lifecycle_state: 'enrolled', public_key: identity.public_key, nkey: identity.nkey_public, version_running: '0.1.0' }, now);
    await recordLastSeen(serving.ctx.store, 'kitchen', new Date(now.getTime() - 4 * 86_400_000 - 60_000));
    await upsertNode(serving.ctx.store, { name: 'shelf', lifecycle_state: 'released' }, now);

    const answer = await callController(suite.mesh.dir, 'nodes.list', {});
    const nodes = (answer.result as { nodes: Array<Record<string, unknown>> }).nodes;
    expect(nodes.map((node) => [node.name, node.lifecycle_state, node.version_running, node.last_seen])).toEqual([
      ['kitchen', 'enrolled', '0.1.0', 'last seen 4 days ago'],
      ['shelf', 'released', null, 'never seen'],
    ]);
    expect(answer.text).toMatch(/^NAME +STATE +KIND +ADDRESS +VERSION +LAST SEEN +AWAY\nkitchen +enrolled +- +- +0\.1\.0 +last seen 4 days ago \(bound 90 s\) +-\nshelf +released +- +- +- +never seen +-$/);
  });

  test('issues a token that decodes to this broker, its fingerprint and the controller\'s key, and keeps only its hash', async () => {
    const answer = await callController(suite.mesh.dir, 'token.issue', { new: true });
    const issued = answer.result as { token: string; token_id: string; for_node: string | null; expires_at: string; issued_at: string };
    const token = decodeToken(issued.token);
    expect(token).toMatchObject({
      broker_url: suite.mesh.config.broker.url,
      broker_fingerprint: suite.mesh.init.broker.fingerprint,
      controller_public_key: suite.mesh.config.controller.public_key,
      token_id: issued.token_id,
    });
    expect(issued.for_node).toBeNull();
    expect(Date.parse(issued.expires_at) - Date.parse(issued.issued_at)).toBe(15 * 60_000);
    expect(answer.text.split('\n')[0]).toBe(issued.token);

    const [stored] = await serving.ctx.store.query<Record<string, unknown>>('SELECT * FROM tokens WHERE id = $1', [issued.token_id]);
    expect(JSON.stringify(stored)).not.toContain(token.secret);
    expect(log.join('\n')).not.toContain(token.secret);
    expect(log.join('\n')).not.toContain(issued.token);
  });

  test('lets the token\'s enrolment user reach its own subject, and takes the user away once the token expires', async () => {
    const issued = (await callController(suite.mesh.dir, 'token.issue', { new: true, ttl: '1m' })).result as { token: string };
    const token = decodeToken(issued.token);
    const answering = serving.ctx.nc.subscribe(enrolmentSubject(token.token_id), { callback: (_error, message) => {
      message.respond('heard');
    } });
    const password = brokerPasswordFor(token.secret, token.token_id);
    const enrolling = await open({ authenticator: usernamePasswordAuthenticator(enrolmentUserName(token.token_id), password), inboxPrefix: enrolmentInboxPrefix(token.token_id) });
    expect((await enrolling.request(enrolmentSubject(token.token_id), 'hello', { timeout: 5000 })).string()).toBe('heard');
    answering.unsubscribe();

    // Not yet expired: the sweep leaves it alone.
    expect(await sweepExpiredTokens(serving.ctx, serving.ctx.now())).not.toContain(token.token_id);
    const swept = await sweepExpiredTokens(serving.ctx, new Date(Date.now() + 2 * 60_000));
    expect(swept).toContain(token.token_id);
    expect(await closedWithin(enrolling, 5000)).toBe(true);
    await expect(open({ authenticator: usernamePasswordAuthenticator(enrolmentUserName(token.token_id), password) })).rejects.toThrow(/Authorization/i);
    // Swept once: the next sweep does not read it again.
    expect(await sweepExpiredTokens(serving.ctx, new Date(Date.now() + 3 * 60_000))).not.toContain(token.token_id);
  });

  test('a token for an existing node revokes its identity at issue: its connection is dropped and its key can no longer connect', async () => {
    const identity = generateNodeIdentity();
    await upsertNode(serving.ctx.store, { name: 'laptop', lifecycle_state: 'enrolled', public_key: identity.public_key, nkey: identity.nkey_public }, serving.ctx.now());
    await serving.ctx.broker.addNode('laptop', identity.nkey_public);
    const credentials = { authenticator: nkeyAuthenticator(nkeySeedOf(identity.secret_key)), inboxPrefix: nodeInboxPrefix('laptop') };
    const laptop = await open(credentials);

    const answer = await callController(suite.mesh.dir, 'token.issue', { node: 'laptop' });
    const issued = answer.result as { token: string; for_node: string; revoked_identity: string };
    expect(issued.for_node).toBe('laptop');
    expect(issued.revoked_identity).toBe(identity.nkey_public);
    expect(answer.text).toContain('The previous identity of laptop is revoked');

    expect(await closedWithin(laptop, 5000)).toBe(true);
    await expect(open(credentials)).rejects.toThrow(/Authorization/i);
    expect(await getNode(serving.ctx.store, 'laptop')).toMatchObject({ lifecycle_state: 'revoked', nkey: null, public_key: null });
    expect((await getToken(serving.ctx.store, decodeToken(issued.token).token_id))?.for_node).toBe('laptop');
  });

  test('refuses a token for a name with no node record, saying to use --new', async () => {
    const error = await callController(suite.mesh.dir, 'token.issue', { node: 'nobody' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ControllerRefused);
    expect((error as ControllerRefused).condition).toBe('NodeNotFound');
    expect((error as ControllerRefused).value).toBe('nobody');
    expect((error as ControllerRefused).next).toContain('mesh-control token issue --new');
  });

  test('refuses a token with neither --new nor --node, both, or a time to live out of bounds', async () => {
    const conditions = await Promise.all([
      callController(suite.mesh.dir, 'token.issue', {}),
      callController(suite.mesh.dir, 'token.issue', { new: true, node: 'kitchen' }),
      callController(suite.mesh.dir, 'token.issue', { new: true, ttl: '8d' }),
    ].map((call) => call.then(() => 'issued', (error: ControllerRefused) => error.condition)));
    expect(conditions).toEqual(['TokenTargetMissing', 'TokenTargetAmbiguous', 'TokenTtlInvalid']);
  });

  test('refuses a control call with an argument its verb does not declare, naming the argument', async () => {
    const before = await serving.ctx.store.query('SELECT id FROM tokens');
    const error = await callController(suite.mesh.dir, 'token.issue', { new: true, forever: true }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ControllerRefused);
    expect((error as ControllerRefused).condition).toBe('ArgumentNotDeclared');
    expect((error as ControllerRefused).message).toContain('`forever`');
    expect(await serving.ctx.store.query('SELECT id FROM tokens')).toHaveLength(before.length);
  });

  test('holds the declaration stream on disk, keeping the latest declaration per node', async () => {
    const info = await (await jetstreamManager(serving.ctx.nc)).streams.info(DECLARATION_STREAM);
    expect(info.config).toMatchObject({ subjects: ['mesh.declaration.*'], max_msgs_per_subject: 1, storage: StorageType.File });
  });

  test('lets the operator\'s key call the controller and nothing else', async () => {
    const operator = await readNkeySeedFile(suite.mesh.config.operator.nkey_seed_file);
    const connection = await open({ authenticator: nkeyAuthenticator(operator.seed), inboxPrefix: OPERATOR_INBOX_PREFIX });
    const violations: string[] = [];
    void (async () => {
      for await (const status of connection.status()) if (status.type === 'error') violations.push(String(status.error));
    })();
    connection.subscribe('mesh.node.>');
    connection.publish('mesh.declaration.kitchen', 'forged');
    await connection.flush();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(violations.join('\n')).toMatch(/Subscription to "mesh\.node\.>"/);
    expect(violations.join('\n')).toMatch(/Publish to "mesh\.declaration\.kitchen"/);
  });

  test('a controller that starts again acts under a higher epoch, and brings the broker\'s users in line with the store', async () => {
    const first = serving.ctx.epoch();
    // A node revoked while no controller ran keeps its user in the file until one starts.
    const identity = generateNodeIdentity();
    await upsertNode(serving.ctx.store, { name: 'attic', lifecycle_state: 'enrolled', public_key: identity.public_key, nkey: identity.nkey_public }, serving.ctx.now());
    await serving.ctx.broker.addNode('attic', identity.nkey_public);
    await serving.stop();
    await serving.ctx.store.query('SELECT 1').then(
      () => {
        throw new Error('the store should be closed after stop()');
      },
      () => undefined,
    );
    const reopened = await openController(suite.mesh.dir, { log: (line) => log.push(line) });
    try {
      await reopened.ctx.store.query("UPDATE nodes SET lifecycle_state = 'released', public_key = NULL, nkey = NULL WHERE name = 'attic'");
    } finally {
      await reopened.close();
    }
    serving = await serveController(suite.mesh.dir, { parts: PARTS, log: (line) => log.push(line) });
    expect(serving.ctx.epoch()).toBeGreaterThan(first);
    const authFile = await fs.readFile(`${suite.mesh.config.broker.dir}/auth.conf`, 'utf8');
    expect(authFile).not.toContain(identity.nkey_public);
    expect(authFile).not.toContain('# node attic');
    expect(authFile).toContain('# node kitchen');
  });
});

// After the block above has stopped its controller.
describe('callController', () => {
  test('with no controller serving, says so at once (the broker has no responder) and how to start it', async () => {
    // A minute to answer: the broker's "no responders" must come long before.
    const error = await callController(suite.mesh.dir, 'nodes.list', {}, { timeoutMs: 60_000 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ControllerNotRunning);
    expect((error as ControllerNotRunning).message).toBe(`no controller answered on the broker at ${suite.mesh.config.broker.url}`);
    expect((error as ControllerNotRunning).next).toBe(`start it with \`mesh-control serve --dir '${suite.mesh.dir}'\`; if one was stopped or killed just now, a standby takes over within about 20 s (the lease lasts 15 s): try again then`);
  }, 30_000);

  test('is refused by the broker with a key that is not the operator\'s', async () => {
    // Replace the operator's key file with a stranger's: the broker must refuse it.
    const stranger = generateSigningKeyPair();
    const saved = await fs.readFile(suite.mesh.config.operator.nkey_seed_file);
    await writeKeyFile(suite.mesh.config.operator.nkey_seed_file, decodeBase64(stranger.secret_key) as Uint8Array, { overwrite: true });
    try {
      await expect(callController(suite.mesh.dir, 'nodes.list', {})).rejects.toThrow(/refused the credentials/);
    } finally {
      await fs.writeFile(suite.mesh.config.operator.nkey_seed_file, saved, { mode: 0o600 });
    }
  });
});
