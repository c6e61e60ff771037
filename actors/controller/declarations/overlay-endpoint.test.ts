import { nodeReach, NAT_KEEPALIVE_SECONDS } from './overlay-endpoint';
import { overlayFor, type OverlayMember } from './overlay-for';

const overlay = { cidr: '10.77.0.0/16', listen_port: 51820, interface: 'mesh0' };
const KEY = (c: string): string => `${c.repeat(43)}=`;

describe('where peers reach a node', () => {
  test('takes a public address over a private one, whatever order the machine listed them in', () => {
    expect(nodeReach([{ interface: 'eth1', address: '192.168.1.9' }, { interface: 'eth0', address: '203.0.113.7' }], overlay)).toEqual({ endpoint: '203.0.113.7:51820' });
  });

  test('writes an IPv6 endpoint in brackets, and prefers it to a private IPv4', () => {
    expect(nodeReach([{ interface: 'eth0', address: '10.1.0.4' }, { interface: 'eth0', address: '2001:db8::7' }], overlay)).toEqual({ endpoint: '[2001:db8::7]:51820' });
  });

  test('uses a private address but says it is reachable from its own network only', () => {
    expect(nodeReach([{ interface: 'eth0', address: '10.1.0.4' }], overlay)).toEqual({ endpoint: '10.1.0.4:51820', note: 'private address on eth0: reachable from its own network only' });
  });

  test('never takes its overlay address, its own bridges or carrier NAT space, and then says it cannot be reached', () => {
    const reach = nodeReach([
      { interface: 'mesh0', address: '10.77.0.4' },
      { interface: 'eth9', address: '10.77.0.5' },
      { interface: 'docker0', address: '172.17.0.1' },
      { interface: 'wwan0', address: '100.72.1.2' },
    ], overlay);
    expect(reach.endpoint).toBeUndefined();
    expect(reach.note).toMatch(/no address it reported is reachable .*behind NAT.*it reaches them/);
  });

  test('says so when the host reported no addresses at all', () => {
    expect(nodeReach(undefined, overlay)).toEqual({ note: expect.stringMatching(/reported no addresses/) });
  });
});

describe('the overlay of a node with endpoints', () => {
  const home: OverlayMember = { name: 'home', address: '10.77.0.1', wireguard_public_key: KEY('A') };
  const cloud: OverlayMember = { name: 'cloud', address: '10.77.0.2', wireguard_public_key: KEY('E'), endpoint: '203.0.113.7:51820' };
  const laptop: OverlayMember = { name: 'laptop', address: '10.77.0.3', wireguard_public_key: KEY('I'), endpoint: '192.168.1.9:51820' };

  test('gives each peer its endpoint, and one that cannot be reached none', () => {
    const peers = overlayFor(cloud, [home, cloud, laptop], 51820).peers;
    expect(peers).toEqual([
      { name: 'home', public_key: KEY('A'), allowed_ips: ['10.77.0.1/32'] },
      { name: 'laptop', public_key: KEY('I'), allowed_ips: ['10.77.0.3/32'], endpoint: '192.168.1.9:51820' },
    ]);
  });

  test('has a node that cannot be reached keep its tunnels to reachable peers open with keepalives', () => {
    const peers = overlayFor(home, [home, cloud, laptop], 51820).peers;
    expect(peers.map((peer) => peer.persistent_keepalive)).toEqual([NAT_KEEPALIVE_SECONDS, NAT_KEEPALIVE_SECONDS]);
  });
});
