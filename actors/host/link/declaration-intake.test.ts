import { jetstreamManager } from '@nats-io/jetstream';
import { DECLARATION_STREAM, declarationConsumer } from '../../shared/bus/subjects';
import { generateNodeIdentity, nkeySeedOf } from '../../shared/crypto';
import { startTestBroker, type TestBroker } from '../../shared/testing/test-broker';
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
      expect(handler.notes[0]).toMatch(/^cannot read declarations from the broker: .*; trying again$/);

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
