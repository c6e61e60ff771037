import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, PermissionViolationError, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { brokerPasswordFor, generateNodeIdentity, generateTokenCredentials, nkeySeedOf, ready } from '../../shared/crypto';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import {
  DECLARATION_STREAM,
  DECLARATION_SUBJECTS,
  NODE_JS_API_PREFIX,
  declarationConsumer,
  declarationSubject,
  enrolmentInboxPrefix,
  enrolmentSubject,
  heartbeatSubject,
  nodeInboxPrefix,
  nodeSubjectRoot,
  reportSubject,
} from '../../shared/bus/subjects';

// These are the broker's half of the security rules: each node publishes and subscribes only
// its own subjects, each enrolment user only its token's, and removal takes effect at once.

/** Every permission violation the server reports on a connection, as it arrives. */
function violationsOf(connection: NatsConnection): { seen: PermissionViolationError[]; next(subject: string): Promise<PermissionViolationError> } {
  const seen: PermissionViolationError[] = [];
  const waiting: Array<{ subject: string; resolve(error: PermissionViolationError): void }> = [];
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type !== 'error' || !(status.error instanceof PermissionViolationError)) continue;
      const violation = status.error;
      seen.push(violation);
      for (const waiter of waiting.filter((w) => w.subject === violation.subject)) waiter.resolve(violation);
    }
  })();
  return {
    seen,
    next: (subject) => {
      const already = seen.find((violation) => violation.subject === subject);
      return already ? Promise.resolve(already) : new Promise((resolve) => waiting.push({ subject, resolve }));
    },
  };
}

/** Messages a controller receives on `mesh.>`, answering requests with "answer to <subject>". */
function controllerInbox(controller: NatsConnection): { received: Msg[]; until(subject: string): Promise<void> } {
  const received: Msg[] = [];
  const waiting: Array<{ subject: string; resolve(): void }> = [];
  controller.subscribe('mesh.>', {
    callback: (_error, message) => {
      received.push(message);
      if (message.reply) message.respond(`answer to ${message.subject}`);
      for (const waiter of waiting.filter((w) => w.subject === message.subject)) waiter.resolve();
    },
  });
  return {
    received,
    until: (subject) => (received.some((m) => m.subject === subject) ? Promise.resolve() : new Promise((resolve) => waiting.push({ subject, resolve }))),
  };
}

async function newNode(broker: TestBroker, name: string): Promise<{ name: string; seed: Uint8Array }> {
  const identity = generateNodeIdentity();
  await broker.addNodeUser(name, identity.nkey_public);
  return { name, seed: nkeySeedOf(identity.secret_key) };
}

describe('node users', () => {
  let broker: TestBroker;
  let controller: NatsConnection;
  let inbox: ReturnType<typeof controllerInbox>;
  let alpha: { name: string; seed: Uint8Array };
  let beta: { name: string; seed: Uint8Array };
  // One connection for most tests: an nkey connection costs a signature, slow under jest.
  let node: NatsConnection;

  beforeAll(async () => {
    await ready();
    broker = await startTestBroker();
    controller = await broker.connectAsController();
    inbox = controllerInbox(controller);
    alpha = await newNode(broker, 'alpha');
    beta = await newNode(broker, 'beta');
    const manager = await jetstreamManager(controller);
    await manager.streams.add({ name: DECLARATION_STREAM, subjects: [DECLARATION_SUBJECTS], max_msgs_per_subject: 1 });
    for (const node of [alpha.name, beta.name]) {
      await manager.consumers.add(DECLARATION_STREAM, { durable_name: declarationConsumer(node), filter_subject: declarationSubject(node), ack_policy: AckPolicy.Explicit });
      await jetstream(controller).publish(declarationSubject(node), `declaration for ${node}`);
    }
    await controller.flush();
    node = await broker.connectAsNode(alpha.name, alpha.seed);
  });

  afterAll(async () => {
    await broker?.stop();
  });

  test('a node publishes reports and heartbeats under its own subjects and the controller receives them', async () => {
    node.publish(reportSubject(alpha.name), 'report');
    node.publish(heartbeatSubject(alpha.name), 'heartbeat');
    await inbox.until(heartbeatSubject(alpha.name));
    expect(inbox.received.find((m) => m.subject === reportSubject(alpha.name))?.string()).toBe('report');
  });

  test('a node reads its own latest declaration through its durable consumer and acknowledges it', async () => {
    const consumer = await jetstream(node, { apiPrefix: NODE_JS_API_PREFIX }).consumers.get(DECLARATION_STREAM, declarationConsumer(alpha.name));
    const message = await consumer.next({ expires: 2000 });
    expect(message?.string()).toBe('declaration for alpha');
    expect(await message?.ackAck()).toBe(true);
    expect((await consumer.info(true)).num_ack_pending).toBe(0);
  });

  test('a request a node sends up its own subjects is not answered: the controller may not publish on a reply a node chose', async () => {
    // Reports and heartbeats cross from the nodes' account as a stream, whose reply subjects
    // arrive as the node set them; the controller has no right to publish there, in any account.
    const refused = violationsOf(controller);
    await expect(node.request(`${nodeSubjectRoot(alpha.name)}.ask`, 'question', { timeout: 1000 })).rejects.toThrow(/timeout/i);
    await inbox.until(`${nodeSubjectRoot(alpha.name)}.ask`);
    const asked = inbox.received.find((m) => m.subject === `${nodeSubjectRoot(alpha.name)}.ask`);
    expect((await refused.next(asked?.reply ?? '')).operation).toBe('publish');
  });

  test('a node is refused publishing under another node\'s subjects, and nothing reaches the controller', async () => {
    const violations = violationsOf(node);
    node.publish(reportSubject(beta.name), 'forged report');
    node.publish(`${nodeSubjectRoot(alpha.name)}.marker`, 'after the forgery');
    const violation = await violations.next(reportSubject(beta.name));
    expect(violation.operation).toBe('publish');
    // One connection's messages arrive in order: once the marker is in, the forgery would be too.
    await inbox.until(`${nodeSubjectRoot(alpha.name)}.marker`);
    expect(inbox.received.map((m) => m.subject)).not.toContain(reportSubject(beta.name));
  });

  test('a node is refused requests on another node\'s subjects', async () => {
    await expect(node.request(`${nodeSubjectRoot(beta.name)}.ask`, 'x', { timeout: 2000 })).rejects.toThrow(`Permissions Violation for Publish to "${nodeSubjectRoot(beta.name)}.ask"`);
  });

  test('a node cannot publish declarations, not even its own', async () => {
    const violations = violationsOf(node);
    node.publish(declarationSubject(alpha.name), 'self-declared');
    expect((await violations.next(declarationSubject(alpha.name))).operation).toBe('publish');
  });

  test('a node cannot read another node\'s declarations through that node\'s consumer', async () => {
    await expect(jetstream(node, { apiPrefix: NODE_JS_API_PREFIX }).consumers.get(DECLARATION_STREAM, declarationConsumer(beta.name))).rejects.toThrow(/Permissions Violation for Publish to "mesh\.js\.CONSUMER\.INFO/);
    const violations = violationsOf(node);
    for (const prefix of [NODE_JS_API_PREFIX, '$JS.API']) {
      node.publish(`${prefix}.CONSUMER.MSG.NEXT.${DECLARATION_STREAM}.${declarationConsumer(beta.name)}`, '{"batch":1}', { reply: `${nodeInboxPrefix(alpha.name)}.stolen` });
      await violations.next(`${prefix}.CONSUMER.MSG.NEXT.${DECLARATION_STREAM}.${declarationConsumer(beta.name)}`);
    }
    // Beta's declaration is still waiting for beta.
    const betaNode = await broker.connectAsNode(beta.name, beta.seed);
    const consumer = await jetstream(betaNode, { apiPrefix: NODE_JS_API_PREFIX }).consumers.get(DECLARATION_STREAM, declarationConsumer(beta.name));
    expect((await consumer.next({ expires: 2000 }))?.string()).toBe('declaration for beta');
  });

  test('a node cannot make a consumer of its own, which could be filtered to another node\'s declarations', async () => {
    const manager = await jetstreamManager(node, { checkAPI: false });
    await expect(manager.consumers.add(DECLARATION_STREAM, { filter_subject: declarationSubject(beta.name), ack_policy: AckPolicy.None })).rejects.toThrow(/Permissions Violation/);
  });

  test('a node cannot subscribe under another node\'s inbox prefix, nor the controller\'s, so it reads no one else\'s replies', async () => {
    for (const subject of [`${nodeInboxPrefix(beta.name)}.>`, '_INBOX.>', 'mesh.>']) {
      const subscription = node.subscribe(subject);
      const ended = (async () => {
        for await (const message of subscription) return `received ${message.subject}`;
        return 'ended without error';
      })();
      await expect(ended).rejects.toMatchObject({ name: 'PermissionViolationError', operation: 'subscription', subject });
    }
  });

  test('a node that leaves its inbox prefix unset gets no replies at all', async () => {
    const careless = await broker.connectAsNode(alpha.name, alpha.seed, { inboxPrefix: '_INBOX' });
    await expect(careless.request(`${nodeSubjectRoot(alpha.name)}.ask`, 'x', { timeout: 1000 })).rejects.toThrow(/Permissions Violation for Subscription/);
  });
});

describe('enrolment users', () => {
  let broker: TestBroker;
  let inbox: ReturnType<typeof controllerInbox>;
  const token = generateTokenCredentials();
  const password = brokerPasswordFor(token.secret, token.token_id);

  beforeAll(async () => {
    broker = await startTestBroker();
    inbox = controllerInbox(await broker.connectAsController());
    await broker.addEnrolmentUser(token.token_id, password);
  });

  afterAll(async () => {
    await broker?.stop();
  });

  test('an enrolment user asks its own token\'s enrolment subject and receives the controller\'s answer', async () => {
    const enrolling = await broker.connectAsEnrolment(token.token_id, password);
    const answer = await enrolling.request(enrolmentSubject(token.token_id), 'join', { timeout: 2000 });
    expect(answer.string()).toBe(`answer to ${enrolmentSubject(token.token_id)}`);
  });

  test('an enrolment user may publish nowhere else: not another token\'s subject, not a node\'s', async () => {
    const enrolling = await broker.connectAsEnrolment(token.token_id, password);
    const other = enrolmentSubject('ffffffffffffffff');
    await expect(enrolling.request(other, 'join', { timeout: 2000 })).rejects.toThrow(`Permissions Violation for Publish to "${other}"`);
    const violations = violationsOf(enrolling);
    enrolling.publish(reportSubject('alpha'), 'pretending');
    await violations.next(reportSubject('alpha'));
    expect(inbox.received.map((m) => m.subject)).not.toContain(reportSubject('alpha'));
  });

  test('an enrolment user cannot subscribe outside its own inbox prefix', async () => {
    const enrolling = await broker.connectAsEnrolment(token.token_id, password);
    const subject = `${enrolmentInboxPrefix('ffffffffffffffff')}.>`;
    // A refused subscription ends: its `closed` settles with the server's refusal.
    await expect(enrolling.subscribe(subject).closed).resolves.toMatchObject({ name: 'PermissionViolationError', operation: 'subscription', subject });
  });

  test('a wrong password does not connect', async () => {
    await expect(broker.connectAsEnrolment(token.token_id, brokerPasswordFor(generateTokenCredentials().secret, token.token_id), { reconnect: false }))
      .rejects.toMatchObject({ name: 'AuthorizationError' });
  });

  test('a user name alone does not connect', async () => {
    await expect(connect({ servers: broker.url, tls: { ca: broker.caPem }, user: `enrol-${token.token_id}`, reconnect: false })).rejects.toMatchObject({ name: 'AuthorizationError' });
  });
});

describe('removing a user', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    await ready();
    broker = await startTestBroker();
  });

  afterAll(async () => {
    await broker?.stop();
  });

  test('removing a node user and reloading closes its live connection at once, and it cannot connect again', async () => {
    const node = await newNode(broker, 'gamma');
    const connection = await broker.connectAsNode(node.name, node.seed, { reconnect: false });
    const events: string[] = [];
    void (async () => {
      for await (const status of connection.status()) events.push(status.type);
    })();
    let closedAt = 0;
    const closed = connection.closed().then(() => (closedAt = Date.now()));

    await broker.removeUser({ node: node.name });
    const reloadedAt = Date.now();
    await closed;
    expect(connection.isClosed()).toBe(true);
    expect(events).toContain('disconnect');
    // "At once": closed by the time the reload is confirmed, or within a moment of it.
    expect(closedAt - reloadedAt).toBeLessThan(500);
    await expect(broker.connectAsNode(node.name, node.seed, { reconnect: false })).rejects.toMatchObject({ name: 'AuthorizationError' });
  });

  test('a node that keeps reconnecting is refused and gives up with an authorization error', async () => {
    const node = await newNode(broker, 'delta');
    const connection = await broker.connectAsNode(node.name, node.seed, { reconnectTimeWait: 50, reconnectJitter: 0, reconnectJitterTLS: 0 });
    await broker.removeUser({ node: node.name });
    await expect(connection.closed()).resolves.toMatchObject({ name: 'AuthorizationError' });
  });

  test('removing an enrolment user closes its connection too, and the password stops working', async () => {
    const token = generateTokenCredentials();
    const password = brokerPasswordFor(token.secret, token.token_id);
    await broker.addEnrolmentUser(token.token_id, password);
    const connection = await broker.connectAsEnrolment(token.token_id, password, { reconnect: false });
    await broker.removeUser({ token_id: token.token_id });
    await connection.closed();
    expect(connection.isClosed()).toBe(true);
    await expect(broker.connectAsEnrolment(token.token_id, password, { reconnect: false })).rejects.toMatchObject({ name: 'AuthorizationError' });
  });

  test('other users stay connected through the reload', async () => {
    const stays = await newNode(broker, 'epsilon');
    const goes = await newNode(broker, 'zeta');
    const staying = await broker.connectAsNode(stays.name, stays.seed, { reconnect: false });
    await broker.removeUser({ node: goes.name });
    await staying.flush();
    expect(staying.isClosed()).toBe(false);
  });
});
