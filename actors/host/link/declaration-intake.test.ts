import { jetstreamManager } from '@nats-io/jetstream';
import { DECLARATION_STREAM, declarationConsumer } from '../../shared/bus/subjects';
import { generateNodeIdentity, nkeySeedOf } from '../../shared/crypto';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { startDeclarationIntake } from './declaration-intake';
import { FakeController } from './testing/fake-controller';

// The intake against a real broker, connected as the node with only a node's permissions.

let broker: TestBroker;
let controller: FakeController;

beforeAll(async () => {
  broker = await startTestBroker({ dirPrefix: 'intake test-broker' });
  controller = await FakeController.start(broker);
});
afterAll(async () => {
  await controller?.stop();
  await broker?.stop();
});

// A handler that holds each message until the test lets it go.
class HeldHandler {
  readonly taken: string[] = [];
  readonly notes: string[] = [];
  private release: Array<() => void> = [];
  take = (data: Uint8Array): Promise<void> => {
    this.taken.push(new TextDecoder().decode(data));
    return new Promise((resolve) => this.release.push(resolve));
  };
  note = (line: string): void => {
    this.notes.push(line);
  };
  letGo(): void {
    this.release.shift()?.();
  }
}

async function until(look: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await look())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the declaration intake', () => {
  test('waits for a consumer the controller has not made yet, then takes declarations and acknowledges each only once taken', async () => {
    const identity = generateNodeIdentity();
    await broker.addNodeUser('intake', identity.nkey_public);
    const connection = await broker.connectAsNode('intake', nkeySeedOf(identity.secret_key));
    const handler = new HeldHandler();
    const intake = startDeclarationIntake(connection, 'intake', handler, { firstMs: 50, capMs: 200 });
    try {
      await until(() => handler.notes.length > 0, 'the intake to say the consumer is missing');
      expect(handler.notes[0]).toMatch(/^deaf: this node's consumer node-intake is gone from the broker/);

      await controller.makeConsumer('intake');
      await controller.publish('intake', { n: 1 });
      await until(() => handler.taken.length === 1, 'the first declaration');
      expect(handler.taken).toEqual(['{"n":1}']);

      const jsm = await jetstreamManager(controller.connection);
      const pending = async () => (await jsm.consumers.info(DECLARATION_STREAM, declarationConsumer('intake'))).num_ack_pending;
      expect(await pending()).toBe(1);
      handler.letGo();
      await until(async () => (await pending()) === 0, 'the acknowledgement');

      await controller.publish('intake', { n: 2 });
      await until(() => handler.taken.length === 2, 'the second declaration');
      handler.letGo();
      expect(handler.taken).toEqual(['{"n":1}', '{"n":2}']);
    } finally {
      await intake.stop();
      await connection.close();
    }
  });
});

describe('a host whose consumer is taken away', () => {
  test('says once that it is deaf, keeps saying so through deafness(), and takes the next declaration once the consumer is made again, on the same connection', async () => {
    const identity = generateNodeIdentity();
    await broker.addNodeUser('deafnode', identity.nkey_public);
    const connection = await broker.connectAsNode('deafnode', nkeySeedOf(identity.secret_key));
    await controller.makeConsumer('deafnode');
    const handler = new HeldHandler();
    const intake = startDeclarationIntake(connection, 'deafnode', handler, { firstMs: 50, capMs: 200 });
    try {
      await controller.publish('deafnode', { n: 1 });
      await until(() => handler.taken.length === 1, 'the first declaration');
      handler.letGo();
      expect(intake.deafness()).toBeNull();

      // An operator deletes the node's consumer by mistake while the host is pulling.
      const jsm = await jetstreamManager(controller.connection);
      await jsm.consumers.delete(DECLARATION_STREAM, declarationConsumer('deafnode'));
      await until(() => intake.deafness() !== null, 'the intake to find its consumer gone');
      expect(intake.deafness()?.reason).toBe('consumer_not_found');
      // Many retries later (50–200 ms apart), it has said so once.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const deafLines = handler.notes.filter((line) => line.startsWith('deaf: '));
      expect(deafLines).toHaveLength(1);
      expect(deafLines[0]).toContain("this node's consumer node-deafnode is gone from the broker");
      expect(handler.notes.filter((line) => line.startsWith('cannot read declarations'))).toEqual([]);

      // The controller makes it again: the next declaration lands without a new connection.
      // (Published first, so the slot already holds it when the consumer starts reading.)
      await controller.publish('deafnode', { n: 2 });
      await controller.makeConsumer('deafnode');
      await until(() => handler.taken.length === 2, 'the declaration after the repair');
      handler.letGo();
      expect(handler.taken[1]).toBe('{"n":2}');
      expect(intake.deafness()).toBeNull();
      expect(handler.notes.some((line) => line.startsWith('hearing again: node-deafnode is back on the broker'))).toBe(true);
    } finally {
      await intake.stop();
      await connection.close();
    }
  }, 30_000);
});
