import { BrokerRefusedCredentials, BrokerUnreachable } from './bus-errors';
import { connectThroughReloads, RELOAD_RETRY_WAITS_MS, STALLED_HANDSHAKE_RETRIES } from './through-reloads';

/** A connect that is refused `refusals` times, then gives `value`; records the waits asked for. */
function refusedThen(refusals: number, value = 'connected') {
  const waits: number[] = [];
  let calls = 0;
  const connectOnce = async () => {
    calls += 1;
    if (calls <= refusals) throw new BrokerRefusedCredentials('tls://127.0.0.1:4222');
    return value;
  };
  return { connectOnce, waits, sleep: async (ms: number) => { waits.push(ms); }, calls: () => calls };
}

describe('connectThroughReloads', () => {
  test('asks again after each refusal, with the waits given, until the broker lets it in', async () => {
    const fake = refusedThen(3);

    await expect(connectThroughReloads(fake.connectOnce, RELOAD_RETRY_WAITS_MS, fake.sleep)).resolves.toBe('connected');
    expect([fake.calls(), fake.waits]).toEqual([4, RELOAD_RETRY_WAITS_MS.slice(0, 3)]);
  });

  test('a refusal that stands is thrown after the last wait', async () => {
    const fake = refusedThen(Number.POSITIVE_INFINITY);

    await expect(connectThroughReloads(fake.connectOnce, RELOAD_RETRY_WAITS_MS, fake.sleep)).rejects.toBeInstanceOf(BrokerRefusedCredentials);
    expect([fake.calls(), fake.waits]).toEqual([RELOAD_RETRY_WAITS_MS.length + 1, RELOAD_RETRY_WAITS_MS]);
  });

  test('any other failure is thrown at once, without waiting', async () => {
    const waits: number[] = [];
    const unreachable = new BrokerUnreachable('tls://127.0.0.1:4222', 'connection refused');

    await expect(connectThroughReloads(async () => { throw unreachable; }, RELOAD_RETRY_WAITS_MS, async (ms) => { waits.push(ms); })).rejects.toBe(unreachable);
    expect(waits).toEqual([]);
  });

  test('a handshake that timed out or a reset connection is tried again, a bounded number of times', async () => {
    const waits: number[] = [];
    let calls = 0;
    const stalling = (reason: string, stalls: number) => async () => {
      calls += 1;
      if (calls <= stalls) throw new BrokerUnreachable('tls://127.0.0.1:4222', reason);
      return 'connected';
    };
    await expect(connectThroughReloads(stalling('the NATS handshake timed out', 1), RELOAD_RETRY_WAITS_MS, async (ms) => { waits.push(ms); })).resolves.toBe('connected');
    calls = 0;
    await expect(connectThroughReloads(stalling('connection reset', 2), RELOAD_RETRY_WAITS_MS, async (ms) => { waits.push(ms); })).resolves.toBe('connected');
    expect(waits).toEqual([250, 250, 750]);

    // A broker that keeps hanging is said after the retries, not after every wait.
    calls = 0;
    waits.length = 0;
    await expect(connectThroughReloads(stalling('the NATS handshake timed out', Number.POSITIVE_INFINITY), RELOAD_RETRY_WAITS_MS, async (ms) => { waits.push(ms); })).rejects.toBeInstanceOf(BrokerUnreachable);
    expect(calls).toBe(STALLED_HANDSHAKE_RETRIES + 1);
  });
});
