import type { KV } from '@nats-io/kv';
import type { BrokerUser } from './auth-file';
import { decodeBrokerUsers } from './broker-users-bucket';
import { BrokerUsersPublisher } from './broker-users-publisher';

/** A fake of the one KV call the publisher makes: records each list put, refusing the first `failures`. */
class RecordingBucket {
  readonly lists: BrokerUser[][] = [];
  attempts = 0;
  constructor(private failures: number) {}

  put = async (_key: string, value: Uint8Array): Promise<number> => {
    this.attempts += 1;
    // Lets a second offer arrive while this write is in flight.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('no responders available for request');
    }
    this.lists.push(decodeBrokerUsers(value));
    return this.lists.length;
  };
}

const controller = (nkey: string): BrokerUser => ({ role: 'controller', nkey });

describe('BrokerUsersPublisher', () => {
  it('writes the latest list offered, not each one, and stops once it is written', async () => {
    const bucket = new RecordingBucket(0);
    const publisher = new BrokerUsersPublisher(async () => bucket as unknown as KV, () => undefined);
    publisher.offer([controller('A')]);
    publisher.offer([controller('B')]);
    publisher.offer([controller('C')]);
    await publisher.settled();
    expect(bucket.lists.at(-1)).toEqual([controller('C')]);
    expect(bucket.lists).not.toContainEqual([controller('B')]);
  });

  it('tries a refused write again until the bucket takes it, and says so once', async () => {
    const bucket = new RecordingBucket(1);
    const said: string[] = [];
    const publisher = new BrokerUsersPublisher(async () => bucket as unknown as KV, (line) => said.push(line));
    publisher.offer([controller('A')]);
    await publisher.settled();
    expect(bucket.lists).toEqual([[controller('A')]]);
    expect(bucket.attempts).toBe(2);
    expect(said).toEqual([expect.stringContaining('could not be put'), expect.stringContaining('again')]);
  });
});
