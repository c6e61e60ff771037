import { createUser } from '@nats-io/nkeys';
import { nkeyAuthenticator, usernamePasswordAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { enrolmentInboxPrefix, enrolmentSubject, enrolmentUserName, nodeInboxPrefix, reportSubject } from './subjects';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { BrokerRefusedCredentials, FingerprintMismatch } from './bus-errors';
import { connectPinned } from './connect-pinned';

// The mesh's own broker, made the way `mesh-control init` makes it: nkey users for nodes,
// one-time password users for tokens, each with its own inbox prefix.

let broker: TestBroker;
let controller: NatsConnection;
const opened: NatsConnection[] = [];

beforeAll(async () => {
  broker = await startTestBroker({ dirPrefix: 'mesh pinned-broker' });
  controller = await broker.connectAsController();
  // The controller answers whatever a node or an enrolling host asks, echoing it.
  const answer = controller.subscribe('mesh.>');
  void (async () => {
    for await (const message of answer) message.respond(`heard ${message.subject}: ${message.string()}`);
  })();
  await controller.flush();
});
afterAll(async () => {
  await Promise.allSettled(opened.map((connection) => connection.close()));
  await broker.stop();
});

async function pinned(...args: Parameters<typeof connectPinned>): Promise<NatsConnection> {
  const connection = await connectPinned(...args);
  opened.push(connection);
  return connection;
}

describe('a pinned connection to the mesh broker', () => {
  it("connects with the pinned fingerprint and a node's nkey, and sends on the node's own subjects", async () => {
    const node = createUser();
    await broker.addNodeUser('lab-1', node.getPublicKey());
    const nc = await pinned(broker.url, broker.fingerprint, { authenticator: nkeyAuthenticator(node.getSeed()), inboxPrefix: nodeInboxPrefix('lab-1'), reconnect: false });
    // A node's reports cross to the controller's account as a stream: no answer comes back that way.
    const heard = new Promise<string>((resolve) => {
      controller.subscribe(reportSubject('lab-1'), { max: 1, callback: (_error, message) => resolve(message.string()) });
    });
    await controller.flush();
    nc.publish(reportSubject('lab-1'), 'applied');
    expect(await heard).toBe('applied');
    expect(nc.isClosed()).toBe(false);
  });

  it("connects with an enrolment token's one-time password and reads the answer under its own inbox prefix", async () => {
    const tokenId = '0123456789abcdef';
    await broker.addEnrolmentUser(tokenId, 'one-time-password-for-this-token');
    const nc = await pinned(broker.url, broker.fingerprint, {
      authenticator: usernamePasswordAuthenticator(enrolmentUserName(tokenId), 'one-time-password-for-this-token'),
      inboxPrefix: enrolmentInboxPrefix(tokenId),
      reconnect: false,
    });
    const reply = await nc.request(enrolmentSubject(tokenId), 'join', { timeout: 2000 });
    expect(reply.string()).toBe(`heard ${enrolmentSubject(tokenId)}: join`);
  });

  it('refuses the real broker when the pin is another certificate', async () => {
    const other = `${broker.fingerprint.slice(0, 63)}${broker.fingerprint.endsWith('0') ? '1' : '0'}`;
    const error = await connectPinned(broker.url, other, { authenticator: nkeyAuthenticator(broker.controllerSeed), reconnect: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FingerprintMismatch);
    expect((error as FingerprintMismatch).found).toBe(broker.fingerprint);
  });

  it('connects when the broker presents the second of two pinned certificates, as during a rotation', async () => {
    const other = `${broker.fingerprint.slice(0, 63)}${broker.fingerprint.endsWith('0') ? '1' : '0'}`;
    const nc = await pinned(broker.url, [other, broker.fingerprint], { authenticator: nkeyAuthenticator(broker.controllerSeed), reconnect: false });
    await nc.flush();
    expect(nc.isClosed()).toBe(false);
  });

  it('refuses the real broker when neither of two pins is its certificate, naming both', async () => {
    const flip = (last: string) => `${broker.fingerprint.slice(0, 63)}${last}`;
    const pins = broker.fingerprint.endsWith('0') ? [flip('1'), flip('2')] : [flip('0'), flip(broker.fingerprint.endsWith('1') ? '2' : '1')];
    const error = await connectPinned(broker.url, pins, { authenticator: nkeyAuthenticator(broker.controllerSeed), reconnect: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FingerprintMismatch);
    expect((error as FingerprintMismatch).pinned).toEqual(pins);
    expect((error as FingerprintMismatch).message).toContain(`expected sha256 ${pins[0]} or sha256 ${pins[1]}, found sha256 ${broker.fingerprint}`);
  });

  it('says the broker refused the credentials, as final, when the password is wrong', async () => {
    const tokenId = 'fedcba9876543210';
    await broker.addEnrolmentUser(tokenId, 'the-right-password-for-this-token');
    const error = await connectPinned(broker.url, broker.fingerprint, {
      authenticator: usernamePasswordAuthenticator(enrolmentUserName(tokenId), 'a-wrong-password-for-this-token'),
      inboxPrefix: enrolmentInboxPrefix(tokenId),
      reconnect: false,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrokerRefusedCredentials);
    expect((error as BrokerRefusedCredentials).retryable).toBe(false);
    expect((error as BrokerRefusedCredentials).next).toContain('mesh-control token issue');
  });
});
