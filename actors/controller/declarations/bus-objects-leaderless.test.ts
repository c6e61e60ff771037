import { AckPolicy, type ConsumerConfig, type JetStreamManager } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/transport-node';
import { DECLARATION_STREAM, declarationConsumer, declarationSubject } from '../../shared/bus/subjects';
import type { ControllerContext } from '../controller-context';
import { BusObjects } from './bus-objects';

// nats-server 2.9.10 may leave a 3-replica consumer without a leader after a server of the
// cluster is killed and restarted (seed 10 of the cluster chaos test: hosts' pulls timed out for
// minutes). Nothing answers for such a consumer, yet it is listed. The real failure needs a
// cluster and luck, so the broker's consumer API is played by a small fake that answers nothing
// for the lost consumer, as the cluster did.

/** A fake of the consumer API: `info` times out for a leaderless consumer; deletes and adds are recorded. */
class FakeLeaderlessConsumers {
  readonly asked: string[] = [];
  leaderless = true;

  readonly consumers = {
    info: async (stream: string, name: string): Promise<{ config: ConsumerConfig }> => {
      this.asked.push(`info ${stream} ${name}`);
      if (this.leaderless) throw new TimeoutError();
      throw new Error('not reached');
    },
    delete: async (stream: string, name: string): Promise<boolean> => {
      this.asked.push(`delete ${stream} ${name}`);
      return true;
    },
    add: async (stream: string, config: Partial<ConsumerConfig>): Promise<unknown> => {
      this.asked.push(`add ${stream} ${config.durable_name ?? ''} ${config.filter_subject ?? ''} ${config.ack_policy ?? ''}`);
      this.leaderless = false;
      return {};
    },
  };
}

/** The little of a controller's context BusObjects uses here: a store that knows nothing of the node, a clock, a log. */
function fakeContext(lines: string[]): ControllerContext {
  return { store: { query: async () => [] }, now: () => new Date('2026-12-07T09:40:00Z'), log: (line: string) => lines.push(line) } as unknown as ControllerContext;
}

describe('a node consumer left without a leader', () => {
  test('is made again when the node says it cannot hear its declarations, and the repair is counted', async () => {
    const lines: string[] = [];
    const objects = new BusObjects(fakeContext(lines));
    const fake = new FakeLeaderlessConsumers();
    const outcome = await objects.assertConsumer(fake as unknown as Pick<JetStreamManager, 'consumers'>, 'kilo', { replaceUnanswered: true });
    expect(outcome).toBe('replaced');
    expect(fake.asked).toEqual([
      `info ${DECLARATION_STREAM} ${declarationConsumer('kilo')}`,
      `delete ${DECLARATION_STREAM} ${declarationConsumer('kilo')}`,
      `add ${DECLARATION_STREAM} ${declarationConsumer('kilo')} ${declarationSubject('kilo')} ${AckPolicy.Explicit}`,
    ]);
    expect(objects.repairs.counts().by_kind.consumer_replaced).toBe(1);
    expect(lines.join('\n')).toMatch(/node kilo: its consumer .* did not answer .* made again/);
  });

  test('is not touched by an assertion before a send: a timeout there is the bus failing the send, not the consumer', async () => {
    const objects = new BusObjects(fakeContext([]));
    const fake = new FakeLeaderlessConsumers();
    await expect(objects.assertConsumer(fake as unknown as Pick<JetStreamManager, 'consumers'>, 'kilo')).rejects.toBeInstanceOf(TimeoutError);
    expect(fake.asked).toEqual([`info ${DECLARATION_STREAM} ${declarationConsumer('kilo')}`]);
  });
});
