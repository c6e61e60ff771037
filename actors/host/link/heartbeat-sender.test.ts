import { Heartbeat } from '../../../schema/heartbeat';
import { LinkClock } from './link-clock';
import { buildHeartbeat, startHeartbeats, type HeartbeatFacts } from './heartbeat-sender';

// A connection that records what was published, in place of the broker.
class RecordingConnection {
  readonly published: Array<{ subject: string; heartbeat: Heartbeat }> = [];
  publish(subject: string, data?: string | Uint8Array): void {
    this.published.push({ subject, heartbeat: Heartbeat.parse(JSON.parse(String(data))) });
  }
}

const at = (seconds: number) => new Date(Date.UTC(2026, 7, 27, 14, 0, seconds));

function facts(clock: LinkClock, lastPass: Date | null = at(3)): HeartbeatFacts {
  return { node: 'alpha', hostKind: 'episodic', clock, lastReconcileAt: () => lastPass, uptimeSeconds: () => 42.4, now: () => at(10) };
}

describe('heartbeats', () => {
  test('say who is here, what runs, its kind, when it last reconciled and how long it has been up', () => {
    const clock = new LinkClock(null);
    clock.up(at(0));
    expect(buildHeartbeat(facts(clock), false)).toEqual({
      node: 'alpha',
      sent_at: '2026-08-27T14:00:10.000Z',
      version_running: expect.stringMatching(/^\d+\.\d+\.\d+/),
      host_kind: 'episodic',
      seconds_since_linked: 0,
      last_reconcile_at: '2026-08-27T14:00:03.000Z',
      uptime_seconds: 42,
    });
    expect(buildHeartbeat(facts(clock, null), false).last_reconcile_at).toBeNull();
  });

  test('go out at once on a new link, carrying the absence before it, then every period saying 0, until stopped', async () => {
    const clock = new LinkClock(at(0));
    clock.up(at(900));
    const connection = new RecordingConnection();
    const heartbeats = startHeartbeats(connection, facts(clock), 30);
    expect(connection.published).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    heartbeats.stop();
    const sent = connection.published.length;
    expect(sent).toBeGreaterThanOrEqual(2);
    expect(connection.published.map((p) => p.subject)).toEqual(Array(sent).fill('mesh.node.alpha.heartbeat'));
    expect(connection.published.map((p) => p.heartbeat.seconds_since_linked)).toEqual([900, ...Array(sent - 1).fill(0)]);
    // The report after the link still says how long the host was away.
    expect(clock.secondsSinceLinked(at(901))).toBe(900);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(connection.published).toHaveLength(sent);
  });

  test('carry the machine\'s addresses as they are at each beat, so its peers follow it when it moves', () => {
    const clock = new LinkClock(null);
    clock.up(at(0));
    let addresses = [{ interface: 'eth0', address: '192.0.2.10' }];
    const told = { ...facts(clock), addresses: () => addresses };
    expect(buildHeartbeat(told, false).addresses).toEqual([{ interface: 'eth0', address: '192.0.2.10' }]);
    addresses = [{ interface: 'wlan0', address: '198.51.100.7' }];
    expect(buildHeartbeat(told, false).addresses).toEqual([{ interface: 'wlan0', address: '198.51.100.7' }]);
    expect('addresses' in buildHeartbeat(facts(clock), false)).toBe(false);
  });

  test('say that the host cannot hear its declarations, and since when, only while that lasts', () => {
    const clock = new LinkClock(null);
    clock.up(at(0));
    let deafness: { since: Date; reason: 'consumer_not_found' } | null = { since: at(5), reason: 'consumer_not_found' };
    const told = { ...facts(clock), deafness: () => deafness };
    expect(buildHeartbeat(told, false).deaf).toEqual({ since: '2026-08-27T14:00:05.000Z', reason: 'consumer_not_found' });
    deafness = null;
    expect('deaf' in buildHeartbeat(told, false)).toBe(false);
  });
});
