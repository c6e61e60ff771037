import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { Overlay } from './overlay';

const key = (fill: number) => Buffer.alloc(32, fill).toString('base64');

const overlay = {
  address: '10.77.0.5/32',
  public_key: key(5),
  listen_port: 51820,
  peers: [
    { name: 'hub', public_key: key(1), endpoint: 'hub.example.net:51820', allowed_ips: ['10.77.0.0/24', 'fd77::/64'], persistent_keepalive: 25 },
    { name: 'laptop', public_key: key(7), allowed_ips: ['10.77.0.7/32'] },
    { name: 'nas', public_key: key(9), endpoint: '[2001:db8::9]:51820', allowed_ips: ['10.77.0.9/32'] },
  ],
  names: [
    { name: 'hub.mesh', address: '10.77.0.1' },
    { name: 'registry.mesh', address: 'fd77::5' },
  ],
};
const [hub, laptop] = overlay.peers;

describe('the overlay', () => {
  it('round-trips a node with three peers and two names through JSON', () => {
    expect(expectRoundTrip(Overlay, overlay, 'overlay')).toEqual(overlay);
  });

  it('accepts a node with no peers, names or listen port yet', () => {
    expect(expectRoundTrip(Overlay, { address: 'fd77::5/128', public_key: key(5), peers: [], names: [] }, 'overlay')).toMatchObject({ peers: [] });
  });

  it.each<RefusalCase>([
    { name: 'an address without a prefix', input: { ...overlay, address: '10.77.0.5' }, path: 'overlay.address', says: /with a prefix/ },
    { name: 'a public key that is not 32 bytes', input: { ...overlay, public_key: Buffer.alloc(31).toString('base64') }, path: 'overlay.public_key', says: /32 bytes/ },
    { name: 'a listen port of 0', input: { ...overlay, listen_port: 0 }, path: 'overlay.listen_port', says: /1-65535/ },
    { name: 'a peer with a capitalised name', input: { ...overlay, peers: [{ ...hub, name: 'Hub' }] }, path: 'overlay.peers[0].name', says: /node name/ },
    { name: 'a peer endpoint without a port', input: { ...overlay, peers: [{ ...hub, endpoint: 'hub.example.net' }] }, path: 'overlay.peers[0].endpoint', says: /endpoint like/ },
    { name: 'a peer endpoint with a port above 65535', input: { ...overlay, peers: [{ ...hub, endpoint: 'hub.example.net:70000' }] }, path: 'overlay.peers[0].endpoint', says: /1-65535/ },
    { name: 'a peer allowed IP that is not a range', input: { ...overlay, peers: [{ ...hub, allowed_ips: ['10.77.0.0/24', 'everything'] }] }, path: 'overlay.peers[0].allowed_ips[1]', says: /prefix/ },
    { name: 'a peer keepalive of zero', input: { ...overlay, peers: [{ ...hub, persistent_keepalive: 0 }] }, path: 'overlay.peers[0].persistent_keepalive', says: /leave it out/ },
    { name: 'two peers with one name', input: { ...overlay, peers: [hub, { ...laptop, name: 'hub' }] }, path: 'overlay.peers[1].name', says: /duplicate peer name "hub": already at \[0\]/ },
    { name: 'two peers with one public key', input: { ...overlay, peers: [hub, { ...laptop, public_key: hub.public_key }] }, path: 'overlay.peers[1].public_key', says: /duplicate peer public key/ },
    { name: 'a name that is not a DNS name', input: { ...overlay, names: [{ name: 'Hub Mesh', address: '10.77.0.1' }] }, path: 'overlay.names[0].name', says: /DNS name/ },
    { name: 'a name pointing at a range rather than an address', input: { ...overlay, names: [{ name: 'hub.mesh', address: '10.77.0.1/32' }] }, path: 'overlay.names[0].address', says: /IP address/ },
    { name: 'a private key carried by mistake', input: { ...overlay, private_key: key(3) }, path: 'overlay.private_key', says: /unknown field/ },
    { name: 'an overlay without peers', input: { ...overlay, peers: undefined }, path: 'overlay.peers', says: /required/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(Overlay, input, 'overlay', path, says);
  });
});
