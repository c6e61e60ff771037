import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { Heartbeat } from './heartbeat';

const heartbeat = {
  node: 'workstation',
  sent_at: '2026-08-27T14:20:00Z',
  version_running: '0.1.0',
  host_kind: 'resident',
  seconds_since_linked: 0,
  last_reconcile_at: '2026-08-27T14:18:03Z',
  uptime_seconds: 86412.5,
};

describe('the heartbeat', () => {
  it('round-trips a heartbeat through JSON', () => {
    expect(expectRoundTrip(Heartbeat, heartbeat, 'heartbeat')).toEqual(heartbeat);
  });

  it('round-trips the first heartbeat of an episodic host that has never reconciled', () => {
    const first = { ...heartbeat, host_kind: 'episodic', seconds_since_linked: null, last_reconcile_at: null, uptime_seconds: 3 };
    expect(expectRoundTrip(Heartbeat, first, 'heartbeat')).toEqual(first);
  });

  it.each<RefusalCase>([
    { name: 'a host kind other than resident or episodic', input: { ...heartbeat, host_kind: 'container' }, path: 'heartbeat.host_kind' },
    { name: 'a send time given as epoch milliseconds', input: { ...heartbeat, sent_at: 1787840400000 }, path: 'heartbeat.sent_at', says: /UTC time/ },
    { name: 'a version with a space in it', input: { ...heartbeat, version_running: '0.1.0 (dev)' }, path: 'heartbeat.version_running', says: /version like/ },
    { name: 'a negative uptime', input: { ...heartbeat, uptime_seconds: -1 }, path: 'heartbeat.uptime_seconds', says: /must not be negative/ },
    { name: 'a missing last reconcile time rather than null', input: { ...heartbeat, last_reconcile_at: undefined }, path: 'heartbeat.last_reconcile_at', says: /required/ },
    { name: 'time since linked given as text', input: { ...heartbeat, seconds_since_linked: '5' }, path: 'heartbeat.seconds_since_linked', says: /expected number, got string/ },
    { name: 'a field heartbeats do not carry', input: { ...heartbeat, load: 0.4 }, path: 'heartbeat.load', says: /unknown field/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(Heartbeat, input, 'heartbeat', path, says);
  });
});
