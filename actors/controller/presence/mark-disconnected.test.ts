import type { Heartbeat } from '../../../schema/heartbeat';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { recordHeartbeat } from '../reports/record-heartbeat';
import { raiseEpochFloor } from '../store/controller-epoch.repo';
import { getNode, upsertNode, type NodeLifecycleState } from '../store/nodes.repo';
import { useTestStore } from '../store/testing/use-test-store';
import { markDisconnected } from './mark-disconnected';

// The marking and the heartbeat that undoes it, on the embedded store (PGlite), each as one
// statement: who is judged silent and by which bound, and that a controller whose epoch another
// has passed writes nothing, however late its timer fires.

const PERIODS = { resident: 30_000, episodic: 300_000 } as const;
const T0 = new Date('2026-09-01T12:00:00Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);

function beat(kind: Heartbeat['host_kind'], secondsSinceLinked: number | null = 0): Pick<Heartbeat, 'deaf' | 'host_kind' | 'seconds_since_linked'> {
  return { host_kind: kind, seconds_since_linked: secondsSinceLinked };
}

describe('marking silent nodes disconnected, on PGlite', () => {
  const t = useTestStore('pglite');
  let epoch = 0;

  async function node(name: string, state: NodeLifecycleState, profileKind?: 'resident' | 'episodic'): Promise<void> {
    const identity = generateNodeIdentity();
    const holds = state === 'enrolled' || state === 'disconnected';
    await upsertNode(t.store, {
      name,
      lifecycle_state: state,
      ...(holds ? { public_key: identity.public_key, nkey: identity.nkey_public } : {}),
      ...(profileKind === undefined ? {} : { profile: { host_kind: profileKind } as never }),
      enrolled_at: T0,
    }, T0);
  }

  beforeAll(async () => {
    await ready();
    epoch = (await raiseEpochFloor(t.store, 5, 'this:1', T0)).floor.epoch;
  });

  test('judges each node by its kind\'s bound, from its last heartbeat or else its enrolment, and leaves revoked and released nodes alone', async () => {
    await node('attic', 'enrolled');
    await node('phone', 'enrolled', 'episodic');
    await node('laptop', 'enrolled', 'episodic');
    await node('gone', 'revoked');
    await node('retired', 'released');
    // The laptop's profile said episodic; its heartbeats say resident, and the latest word wins.
    expect((await recordHeartbeat(t.store, 'laptop', beat('resident'), at(10_000), epoch)).recorded).toBe(true);

    expect(await markDisconnected(t.store, at(89_000), epoch, PERIODS)).toEqual([]);
    const marked = await markDisconnected(t.store, at(100_001), epoch, PERIODS);
    expect(marked).toEqual([
      { name: 'attic', host_kind: 'resident', since: T0 },
      { name: 'laptop', host_kind: 'resident', since: at(10_000) },
    ]);
    expect((await getNode(t.store, 'phone'))?.lifecycle_state).toBe('enrolled');
    expect((await getNode(t.store, 'gone'))?.lifecycle_state).toBe('revoked');
    expect((await getNode(t.store, 'retired'))?.lifecycle_state).toBe('released');
    // Marked once: a later judgement finds nothing new to mark and keeps since when.
    expect(await markDisconnected(t.store, at(200_000), epoch, PERIODS)).toEqual([]);
    expect(await markDisconnected(t.store, at(900_001), epoch, PERIODS)).toEqual([{ name: 'phone', host_kind: 'episodic', since: T0 }]);
  });

  test('counts silence from when the controller began listening at the earliest: a gap of its own is not the nodes\' silence', async () => {
    await node('porch', 'enrolled');
    await recordHeartbeat(t.store, 'porch', beat('resident'), at(0), epoch);
    // This controller started an hour later, and has listened 80 s: porch may be beating all along.
    const started = at(3_600_000);
    expect(await markDisconnected(t.store, at(3_680_000), epoch, PERIODS, started)).toEqual([]);
    expect(await markDisconnected(t.store, at(3_690_001), epoch, PERIODS, started)).toEqual([{ name: 'porch', host_kind: 'resident', since: at(0) }]);
  });

  test('a controller whose epoch another has passed neither marks a node nor brings one back', async () => {
    await node('cellar', 'enrolled');
    await raiseEpochFloor(t.store, epoch + 1, 'other:2', T0);
    expect(await markDisconnected(t.store, at(1_000_000), epoch, PERIODS)).toEqual([]);
    expect((await getNode(t.store, 'cellar'))?.lifecycle_state).toBe('enrolled');

    expect(await recordHeartbeat(t.store, 'attic', beat('resident', 40), at(1_000_000), epoch)).toEqual({ recorded: false });
    const attic = await getNode(t.store, 'attic');
    expect(attic?.lifecycle_state).toBe('disconnected');
    expect(attic?.last_seen_at).toBeNull();

    // The controller now acting does both.
    epoch += 1;
    expect((await markDisconnected(t.store, at(1_000_000), epoch, PERIODS)).map((marked) => marked.name)).toEqual(['cellar']);
    expect(await recordHeartbeat(t.store, 'attic', beat('resident', 40), at(1_000_000), epoch)).toEqual({ recorded: true, back: { from: T0, seconds: 1_000 } });
    const [back] = await t.store.query<{ lifecycle_state: string; disconnected_since: Date | null; away_from: Date; away_until: Date; host_away_seconds: number }>(
      'SELECT lifecycle_state, disconnected_since, away_from, away_until, host_away_seconds FROM nodes WHERE name = $1',
      ['attic'],
    );
    expect(back).toEqual({ lifecycle_state: 'enrolled', disconnected_since: null, away_from: T0, away_until: at(1_000_000), host_away_seconds: 40 });
    // The heartbeats after it say 0, and leave the host's account of its absence as it was.
    expect(await recordHeartbeat(t.store, 'attic', beat('resident', 0), at(1_030_000), epoch)).toEqual({ recorded: true });
    expect((await t.store.query<{ host_away_seconds: number }>('SELECT host_away_seconds FROM nodes WHERE name = $1', ['attic']))[0]?.host_away_seconds).toBe(40);
  });
});
