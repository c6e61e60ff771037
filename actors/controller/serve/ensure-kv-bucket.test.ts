import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/transport-node';
import { answeredOrMade, untilAnswered } from './ensure-kv-bucket';

// nats-server 2.9 in a cluster leaves some requests about a stream just made unanswered; these
// pin how the controller goes on. The real cluster is in broker/broker-cluster.test.ts.

function answersAfter<T>(silences: number, answer: T, other?: Error): { ask: () => Promise<T>; asked: () => number } {
  let asked = 0;
  return {
    ask: async () => {
      asked += 1;
      if (other !== undefined) throw other;
      if (asked <= silences) throw new TimeoutError();
      return answer;
    },
    asked: () => asked,
  };
}

describe('untilAnswered', () => {
  test('asks again while the broker stays silent, and gives the answer', async () => {
    const look = answersAfter(2, 'info');
    await expect(untilAnswered(look.ask, 10_000)).resolves.toBe('info');
    expect(look.asked()).toBe(3);
  });

  test('gives up with the timeout once its time has passed', async () => {
    const look = answersAfter(Number.POSITIVE_INFINITY, 'info');
    await expect(untilAnswered(look.ask, 0)).rejects.toBeInstanceOf(TimeoutError);
    expect(look.asked()).toBe(1);
  });

  test('asks again, after a pause, after an error its caller names', async () => {
    let asked = 0;
    const ask = async () => {
      asked += 1;
      if (asked === 1) throw new Error('stream not found');
      return 'info';
    };
    await expect(untilAnswered(ask, 10_000, (error) => (error as Error).message === 'stream not found')).resolves.toBe('info');
    expect(asked).toBe(2);
  });

  test('throws any other error at once', async () => {
    const look = answersAfter(0, 'info', new Error('stream not found'));
    await expect(untilAnswered(look.ask, 10_000)).rejects.toThrow('stream not found');
    expect(look.asked()).toBe(1);
  });
});

describe('answeredOrMade', () => {
  test('a create left unanswered counts as made when the stream is there', async () => {
    await expect(answeredOrMade(async () => { throw new TimeoutError(); }, async () => 'there')).resolves.toBeUndefined();
  });

  test('a create left unanswered fails with its timeout when the stream is not there', async () => {
    await expect(answeredOrMade(async () => { throw new TimeoutError(); }, async () => { throw new Error('stream not found'); }))
      .rejects.toBeInstanceOf(TimeoutError);
  });

  test('a create answered "stream not found" counts as made when the stream is there', async () => {
    const notFound = new JetStreamApiError({ code: 404, err_code: JetStreamApiCodes.StreamNotFound, description: 'stream not found' });
    await expect(answeredOrMade(async () => { throw notFound; }, async () => 'there')).resolves.toBeUndefined();
    await expect(answeredOrMade(async () => { throw notFound; }, async () => { throw new Error('still not found'); })).rejects.toBe(notFound);
  });

  test('a create refused fails as it was refused, without a look', async () => {
    let looked = false;
    await expect(answeredOrMade(async () => { throw new Error('insufficient resources'); }, async () => { looked = true; }))
      .rejects.toThrow('insufficient resources');
    expect(looked).toBe(false);
  });
});
