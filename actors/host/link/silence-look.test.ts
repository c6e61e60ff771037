import type { DeafReason } from '../../../schema/heartbeat';
import { silenceLook } from './silence-look';

// The look a host takes when its pull misses heartbeats, on a clock the test moves.

class Gone extends Error {}

function rig(answer: () => Promise<unknown>) {
  let clock = 0;
  const lost: DeafReason[] = [];
  let looks = 0;
  const silence = silenceLook({
    look: () => {
      looks += 1;
      return answer();
    },
    missing: (error) => (error instanceof Gone ? 'consumer_not_found' : undefined),
    lost: (reason) => lost.push(reason),
    spacingMs: 60_000,
    now: () => clock,
  });
  return { silence, lost, looks: () => looks, advance: (ms: number) => { clock += ms; } };
}

describe('the look at a silent consumer', () => {
  test('looks once per spacing however often heartbeats are missed', async () => {
    const { silence, looks, advance, lost } = rig(async () => ({}));
    await silence();
    for (let i = 0; i < 10; i += 1) {
      advance(5_000);
      await silence();
    }
    expect(looks()).toBe(1);
    advance(10_000);
    await silence();
    expect(looks()).toBe(2);
    expect(lost).toEqual([]);
  });

  test('does not look again while a look is unanswered', async () => {
    let answer: () => void = () => undefined;
    const { silence, looks, advance } = rig(() => new Promise((resolve) => { answer = () => resolve({}); }));
    const first = silence();
    advance(120_000);
    await silence();
    expect(looks()).toBe(1);
    answer();
    await first;
    advance(60_000);
    void silence();
    expect(looks()).toBe(2);
  });

  test('says the consumer is lost when a look finds it gone', async () => {
    const { silence, lost } = rig(async () => { throw new Gone('consumer not found'); });
    await silence();
    expect(lost).toEqual(['consumer_not_found']);
  });

  test('leaves a look that fails otherwise (a timeout) for the next silence, saying nothing lost', async () => {
    const { silence, lost, looks, advance } = rig(async () => { throw new Error('timeout'); });
    await silence();
    expect(lost).toEqual([]);
    advance(60_000);
    await silence();
    expect(looks()).toBe(2);
    expect(lost).toEqual([]);
  });
});
