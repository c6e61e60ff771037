import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Declaration } from '../../../../schema/declaration';
import { EnrolReply, type EnrolRequest } from '../../../../schema/enrolment';
import type { Envelope } from '../../../../schema/envelope';
import type { Profile } from '../../../../schema/profile';
import { resourceDigest, resourceKey } from '../../../../schema/resource';
import type { Report, ResourceOutcome } from '../../../../schema/report';
import { DECLARATION_STREAM, NODE_JS_API_PREFIX, declarationConsumer, enrolmentSubject, reportSubject } from '../../../shared/bus/subjects';
import {
  brokerPasswordFor,
  decodeBase64,
  decodeToken,
  encodeBase64,
  envelopeDigest,
  generateNodeIdentity,
  generateSigningKeyPair,
  nkeySeedOf,
  openEnvelope,
  ready,
  signingKeyPairOf,
  sodium,
  type NodeIdentity,
} from '../../../shared/crypto';
import { startTestBroker, type TestBroker, type TestConnectionOptions } from '../../../../tests/broker/test-broker';
import { startTestPostgres, type TestPostgres } from '../../../shared/testing/test-postgres';
import { VerbRegistry } from '../../control/verb-registry';
import type { BrokerUsers, ControllerContext } from '../../controller-context';
import { declarationsPart } from '../../declarations/declarations.part';
import { nodeWorkQueue } from '../../declarations/node-work-queue';
import { releasePart } from '../../release/release.part';
import { reportsPart } from '../../reports/reports.part';
import type { ControllerPart, RunningPart } from '../../serve/controller-parts';
import { ensureDeclarationStream } from '../../serve/ensure-declaration-stream';
import { openStore } from '../../store/open-store';
import type { SqlStore, StoreKind } from '../../store/sql-store';
import { issueEnrolmentToken } from '../../tokens/issue-enrolment-token';
import { enrolProofBytes } from '../enrol-proof';
import { enrolmentPart, enrolmentsHandled } from '../enrolment.part';

/** A machine about to enrol: the keys it made and what it says it is. */
export interface TestMachine {
  hostname: string;
  identity: NodeIdentity;
  wireguard_public_key: string;
  profile: Profile;
}

/** A token as the person carries it, taken apart. */
export interface TestToken {
  token_id: string;
  secret: string;
}

/** A declaration as a node reads it from its consumer. */
export interface ReadDeclaration {
  declaration: Declaration;
  digest: string;
}

/**
 * A serving controller's parts (reports, declarations, release, enrolment) over a real TLS
 * nats-server and a real store, with the controller's context built from them the way
 * `mesh-control serve` builds it, for one describe block. Its clock can be moved forward.
 */
export interface TestController {
  readonly ctx: ControllerContext;
  readonly broker: TestBroker;
  readonly verbs: VerbRegistry;
  /** The controller's log lines, in order. */
  readonly logs: string[];
  /** Moves the controller's clock forward. */
  advanceClock(ms: number): void;
  /** Issues a token the way `mesh-control token issue` does (its broker user included). */
  issue(options?: { forNode?: string; ttlMs?: number }): Promise<TestToken>;
  /** A machine with fresh keys and a profile. */
  machine(hostname: string, init?: Profile['init']): TestMachine;
  /** The enrolment request the machine makes with the token, proof signed by its identity. */
  requestFor(machine: TestMachine, token: TestToken): EnrolRequest;
  /**
   * Sends an enrolment request as the token's broker user and returns the answer; after an
   * `ok`, waits until the responder has taken the token's user off the broker, so the next
   * step of a test does not meet that reload (see AnswersInHand).
   */
  enrol(token: TestToken, request: unknown): Promise<EnrolReply>;
  /**
   * Connects as the node, with the machine's identity, trying again for a few seconds while the
   * broker does not know the node yet (its user is added just after the answer), as the host's
   * link does.
   */
  connectNode(node: string, machine: TestMachine, options?: TestConnectionOptions): Promise<NatsConnection>;
  /** The next declaration waiting on the node's consumer, opened against the controller's key, and acknowledged. */
  nextDeclaration(connection: NatsConnection, node: string): Promise<ReadDeclaration>;
  /** Publishes, as the node, a report on a declaration: every resource with `outcome`. */
  report(connection: NatsConnection, read: ReadDeclaration, order: { sequence: number; report_sequence: number }, outcome?: ResourceOutcome): Promise<Report>;
  /** Waits until every enrolment taken in has been handled and every piece of work queued for nodes has finished. */
  settled(): Promise<void>;
  /** Waits until the responder has taken the token's broker user off the broker. */
  retired(token: TestToken): Promise<void>;
  /** Waits until the store counts the node's overlay as applied (its report on it kept). */
  overlayApplied(node: string): Promise<void>;
  /**
   * A machine named `name` enrolled with a token of its own and linked as the node, its first
   * declaration (the overlay) reported applied and counted so: a node ready for its full one.
   */
  enrolOnOverlay(name: string): Promise<{ machine: TestMachine; link: NatsConnection }>;
}

const PARTS: readonly ControllerPart[] = [reportsPart, declarationsPart, releasePart, enrolmentPart];

/** Starts a test controller on a store of `kind` for the enclosing describe block. */
export function useTestController(kind: StoreKind): TestController {
  const logs: string[] = [];
  let store: SqlStore | undefined;
  let postgres: TestPostgres | undefined;
  let storeDir: string | undefined;
  let offsetMs = 0;
  let broker: TestBroker | undefined;
  let ctx: ControllerContext | undefined;
  let users: ReturnType<typeof testBrokerUsers> | undefined;
  let controllerKey = '';
  const verbs = new VerbRegistry();
  const running: RunningPart[] = [];

  // The store is opened and closed here rather than with useTestStore, so that it closes after
  // the parts have stopped and finished what they were doing with it.
  beforeAll(async () => {
    await ready();
    if (kind === 'postgres') {
      postgres = await startTestPostgres();
      store = await openStore({ url: postgres.url });
    } else {
      storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-controller-'));
      store = await openStore({ dir: storeDir });
    }
    broker = await startTestBroker();
    const nc = await broker.connectAsController();
    await ensureDeclarationStream(nc);
    const signing = generateSigningKeyPair();
    controllerKey = signing.public_key;
    ctx = {
      dir: broker.dir,
      config: {
        format: 1,
        broker: { url: broker.url, fingerprint: broker.fingerprint, cert_file: '/test/broker/cert.pem', config_file: '/test/broker/nats-server.conf', dir: broker.dir },
        controller: { public_key: signing.public_key, signing_key_file: '/test/controller.key', nkey_seed_file: '/test/controller.nk' },
        operator: { nkey_seed_file: '/test/operator.nk' },
        store: postgres === undefined ? { kind: 'pglite', dir: storeDir ?? '/test' } : { kind: 'postgres', url: postgres.url },
        overlay: { cidr: '10.77.0.0/24', listen_port: 51820, interface: 'mesh0' },
      },
      store,
      nc,
      signingKey: decodeBase64(signing.secret_key) as Uint8Array,
      broker: (users = testBrokerUsers(broker)),
      epoch: () => 3,
      now: () => new Date(Date.now() + offsetMs),
      log: (line) => logs.push(line),
    };
    for (const part of PARTS) running.push(await part.start(ctx, verbs));
  }, 120_000);

  afterAll(async () => {
    for (const part of running.reverse()) await part.stop();
    if (ctx !== undefined) await nodeWorkQueue(ctx).idle();
    await broker?.stop();
    await store?.close();
    await postgres?.stop();
    if (storeDir !== undefined) await fs.rm(storeDir, { recursive: true, force: true });
  });

  const the = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the test controller's ${what} exists only inside its describe block`);
    return value;
  };

  async function retired(token: TestToken): Promise<void> {
    await eventually(
      async () =>
        !the(users, 'broker users').holdsEnrolment(token.token_id) &&
        (await the(store, 'store').query('SELECT 1 FROM tokens WHERE id = $1 AND broker_user_removed_at IS NOT NULL', [token.token_id])).length === 1
          ? true
          : undefined,
      `token ${token.token_id}'s broker user to be removed`,
    );
  }

  const controller: TestController = {
    get ctx() {
      return the(ctx, 'context');
    },
    get broker() {
      return the(broker, 'broker');
    },
    verbs,
    logs,
    advanceClock: (ms) => {
      offsetMs += ms;
    },
    issue: async (options = {}) => {
      const issued = await issueEnrolmentToken(the(ctx, 'context'), { forNode: options.forNode ?? null, ttlMs: options.ttlMs ?? 15 * 60_000 });
      const token = decodeToken(issued.token);
      return { token_id: token.token_id, secret: token.secret };
    },
    machine: (hostname, init = 'systemd') => ({
      hostname,
      identity: generateNodeIdentity(),
      wireguard_public_key: randomBytes(32).toString('base64'),
      profile: {
        os: { id: 'debian', version_id: '12' },
        arch: 'x86_64',
        kernel: '6.1.0',
        init,
        package_manager: 'apt',
        container_runtime: 'none',
        graphical_session: false,
        host_kind: 'resident',
        hostname,
      },
    }),
    requestFor: (machine, token) => {
      const unsigned = {
        format: 'mesh-enrol-1' as const,
        token_id: token.token_id,
        secret: token.secret,
        public_key: machine.identity.public_key,
        nkey_public: machine.identity.nkey_public,
        wireguard_public_key: machine.wireguard_public_key,
        hostname: machine.hostname,
        profile: machine.profile,
        inventory: { packages: [], services: [], containers: [], collected_at: new Date().toISOString() },
        version_running: '0.1.0',
      };
      const signature = sodium().crypto_sign_detached(enrolProofBytes(unsigned), signingKeyPairOf(machine.identity.secret_key).secretKey);
      return { ...unsigned, proof: encodeBase64(signature) };
    },
    enrol: async (token, request) => {
      const connection = await the(broker, 'broker').connectAsEnrolment(token.token_id, brokerPasswordFor(token.secret, token.token_id), { reconnect: false });
      try {
        const answer = await connection.request(enrolmentSubject(token.token_id), JSON.stringify(request), { timeout: 10_000 });
        const reply = EnrolReply.parse(answer.json());
        if (reply.ok) await retired(token);
        return reply;
      } finally {
        await connection.close().catch(() => undefined);
      }
    },
    connectNode: async (node, machine, options = {}) => {
      const deadline = Date.now() + 5000;
      for (;;) {
        try {
          return await the(broker, 'broker').connectAsNode(node, nkeySeedOf(machine.identity.secret_key), options);
        } catch (error) {
          if (Date.now() > deadline || !/Authorization/i.test(String(error))) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    },
    nextDeclaration: async (connection, node) => {
      const consumer = await jetstream(connection, { apiPrefix: NODE_JS_API_PREFIX }).consumers.get(DECLARATION_STREAM, declarationConsumer(node));
      const message = await consumer.next({ expires: 5000 });
      if (message === null) throw new Error(`no declaration waited for node ${node}`);
      await message.ackAck();
      const envelope = message.json<Envelope>();
      return { declaration: openEnvelope(envelope, controllerKey, Declaration), digest: envelopeDigest(envelope) };
    },
    report: async (connection, read, order, outcome = 'applied') => {
      const { declaration } = read;
      const at = new Date().toISOString();
      const report: Report = {
        node: declaration.node,
        epoch: declaration.epoch,
        sequence: order.sequence,
        report_sequence: order.report_sequence,
        declaration_digest: read.digest,
        generation: declaration.generation,
        results: declaration.resources.map((resource) => ({ key: resourceKey(resource), shape: resource.shape, outcome })),
        owned: {
          resources:
            outcome === 'failed'
              ? []
              : declaration.resources.map((resource) => ({ key: resourceKey(resource), shape: resource.shape, digest: resourceDigest(resource), recorded_at: at })),
        },
        version_running: '0.1.0',
        seconds_since_linked: 0,
        sent_at: at,
      };
      connection.publish(reportSubject(declaration.node), JSON.stringify(report));
      await connection.flush();
      return report;
    },
    settled: async () => {
      // The peers every other node is sent come after the answer the test waited for.
      await enrolmentsHandled(the(ctx, 'context'));
      await nodeWorkQueue(the(ctx, 'context')).idle();
    },
    retired: (token) => retired(token),
    overlayApplied: async (node) => {
      await eventually(async () => ((await the(ctx, 'context').store.query('SELECT 1 FROM nodes WHERE name = $1 AND overlay_applied_generation IS NOT NULL', [node])).length === 1 ? true : undefined), `${node}'s overlay to count as applied`);
    },
    enrolOnOverlay: async (name) => {
      const token = await controller.issue();
      const machine = controller.machine(name);
      await controller.enrol(token, controller.requestFor(machine, token));
      const link = await controller.connectNode(name, machine);
      await controller.report(link, await controller.nextDeclaration(link, name), { sequence: 1, report_sequence: 1 });
      await controller.overlayApplied(name);
      return { machine, link };
    },
  };
  return controller;
}

/** Polls `check` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The controller's broker user list over a test broker, as FileBrokerUsers keeps it: one change
 * at a time, adding a node replaces the node's user, removing one that is not there is fine.
 */
function testBrokerUsers(broker: TestBroker): BrokerUsers & { holdsEnrolment(tokenId: string): boolean } {
  const nodes = new Map<string, string>();
  const tokens = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();
  const serial = (change: () => Promise<void>): Promise<void> => {
    const result = queue.then(change, change);
    queue = result.catch(() => undefined);
    return result;
  };
  return {
    holdsEnrolment: (tokenId) => tokens.has(tokenId),
    addNode: (node, nkey) =>
      serial(async () => {
        if (nodes.get(node) === nkey) return;
        if (nodes.has(node)) await broker.removeUser({ node });
        await broker.addNodeUser(node, nkey);
        nodes.set(node, nkey);
      }),
    removeNode: (node) =>
      serial(async () => {
        if (!nodes.delete(node)) return;
        await broker.removeUser({ node });
      }),
    addEnrolment: (tokenId, password) =>
      serial(async () => {
        if (tokens.has(tokenId)) await broker.removeUser({ token_id: tokenId });
        await broker.addEnrolmentUser(tokenId, password);
        tokens.add(tokenId);
      }),
    removeEnrolment: (tokenId) =>
      serial(async () => {
        if (!tokens.delete(tokenId)) return;
        await broker.removeUser({ token_id: tokenId });
      }),
  };
}
