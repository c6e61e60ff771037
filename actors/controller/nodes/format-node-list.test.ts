import { formatNodeList } from './format-node-list';
import type { NodeListing } from './list-nodes';

const NOW = new Date('2026-12-07T06:00:00Z');

function listing(name: string, address: string | null, reach: NodeListing['overlay_reach']): NodeListing {
  return {
    name, lifecycle_state: 'enrolled', host_kind: 'resident', silence_bound_seconds: 90, address, version_running: '0.1.0',
    last_seen_at: null, last_seen: 'never seen', disconnected_since: null, last_away: null, host_away_seconds: null, overlay_reach: reach,
  };
}

describe('the node list', () => {
  test('says beside its address how a node is reached when it is not the ordinary way, and what each word means once', () => {
    const text = formatNodeList([
      listing('cloud', '10.77.0.1', 'direct'),
      listing('home', '10.77.0.2', 'unreachable'),
      listing('phone', '10.77.0.3', 'unreachable'),
      listing('rack', '10.77.0.4', 'own-network'),
    ], NOW);
    expect(text).toMatch(/\ncloud +enrolled +resident +10\.77\.0\.1 +0\.1\.0/);
    expect(text).toMatch(/\nhome +enrolled +resident +10\.77\.0\.2 \(unreachable\) +0\.1\.0/);
    expect(text.split('\n').slice(-3)).toEqual([
      'overlay:',
      '  own-network: peers reach it at a private address, from its own network only',
      '  unreachable: no address it reported can be reached (behind NAT?): peers cannot start a tunnel to it; it opens them, with keepalives',
    ]);
  });

  test('tells a node without WireGuard to be enrolled again once it has it, since only enrolment sends its profile', () => {
    const text = formatNodeList([listing('bare', '10.77.0.5', 'no-wireguard')], NOW);
    expect(text.split('\n').at(-1)).toBe('  no-wireguard: no WireGuard on the machine: install wireguard-tools and wireguard-go (or a kernel with WireGuard), then enrol it again (mesh-control token issue --node NAME) so its profile says so');
  });

  test('adds nothing under the table when every node is reached directly', () => {
    expect(formatNodeList([listing('cloud', '10.77.0.1', 'direct'), listing('gone', null, null)], NOW).split('\n')).toHaveLength(3);
  });
});
