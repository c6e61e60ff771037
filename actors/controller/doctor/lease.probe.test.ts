import type { LeaseHolder } from '../../../schema/lease-holder';
import type { LeaseStanding } from '../lease/lease-gate';
import { leaseProbe, type LeaseProbeSources } from './lease.probe';
import { runProbes } from './run-probes';

// The lease as the gate and the broker's key say it, from a hand-written view of both: the
// serving test shows the held, renewed lease passing; here, each way it is not.

const NOW = Date.parse('2026-12-03T12:00:00.000Z');
const ACTING: LeaseStanding = { state: 'acting', epoch: 7, acting_for_ms: 9_000, note: null };
const OURS: LeaseHolder = { controller: 'ctl-a:10', instance: 'a'.repeat(16), taken_at: '2026-12-03T11:00:00.000Z', renewed_at: '2026-12-03T11:59:58.000Z' };

function sources(changes: { standing?: LeaseStanding; key?: { holder: LeaseHolder | null; revision: number } | null; unreachable?: boolean }): LeaseProbeSources {
  return {
    standing: () => changes.standing ?? ACTING,
    current: async () => {
      if (changes.unreachable === true) throw new Error('the lease bucket did not answer');
      return changes.key === undefined ? { holder: OURS, revision: 12 } : changes.key;
    },
    instance: OURS.instance,
    ttlMs: 15_000,
    now: () => new Date(NOW),
  };
}

async function verdictOf(given: Parameters<typeof sources>[0]) {
  return (await runProbes([leaseProbe(sources(given))], { source: 'serving', boundMs: 5_000 })).probes[0];
}

describe('the lease probe', () => {
  test('passes a lease this controller holds and renewed within its age limit', async () => {
    expect(await verdictOf({})).toMatchObject({ verdict: 'pass', detail: expect.stringContaining('epoch 7') });
  });

  test('fails a controller that is not acting, saying why', async () => {
    expect(await verdictOf({ standing: { state: 'quiet', epoch: 7, acting_for_ms: 0, note: 'the renewal did not reach the broker' } })).toMatchObject({ verdict: 'fail', detail: expect.stringContaining('quiet: the renewal did not reach the broker') });
  });

  test('fails when the key is gone, written by another controller, or foreign', async () => {
    expect((await verdictOf({ key: null }))?.verdict).toBe('fail');
    expect(await verdictOf({ key: { holder: { ...OURS, controller: 'ctl-b:20', instance: 'b'.repeat(16) }, revision: 13 } })).toMatchObject({ verdict: 'fail', detail: expect.stringContaining('ctl-b:20') });
    expect(await verdictOf({ key: { holder: null, revision: 14 } })).toMatchObject({ verdict: 'fail', detail: expect.stringContaining('no controller wrote') });
  });

  test('fails a lease last renewed longer ago than its age limit', async () => {
    expect(await verdictOf({ key: { holder: { ...OURS, renewed_at: '2026-12-03T11:59:30.000Z' }, revision: 12 } })).toMatchObject({ verdict: 'fail', detail: expect.stringContaining('30 s ago') });
  });

  test('cannot run, never passes, when the key cannot be read', async () => {
    expect(await verdictOf({ unreachable: true })).toMatchObject({ verdict: 'cannot-run', detail: expect.stringContaining('did not answer') });
  });
});
