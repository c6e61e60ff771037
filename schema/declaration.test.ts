import { Declaration } from './declaration';
import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { parseContract } from './parse';

const key = (fill: number) => Buffer.alloc(32, fill).toString('base64');

const overlay = {
  address: '10.77.0.5/32',
  public_key: key(5),
  listen_port: 51820,
  peers: [{ name: 'hub', public_key: key(1), endpoint: '203.0.113.1:51820', allowed_ips: ['10.77.0.0/24'], persistent_keepalive: 25 }],
  names: [{ name: 'hub.mesh', address: '10.77.0.1' }],
};
const motd = { shape: 'file', path: '/etc/motd', content: { text: 'workstation\n' }, mode: '0644', owner: 'root', group: 'root' };
const htop = { shape: 'package', name: 'htop' };
const full = {
  node: 'workstation',
  epoch: 41,
  generation: 7,
  kind: 'full',
  issued_at: '2026-08-27T14:10:00Z',
  resources: [motd, htop],
  overlay,
};
const overlayOnly = { ...full, generation: 1, kind: 'overlay', resources: [] };
const final = { node: 'workstation', epoch: 41, generation: 8, kind: 'final', issued_at: '2026-09-01T09:00:00Z', resources: [] };

describe('the declaration', () => {
  it('round-trips a full declaration through JSON', () => {
    expect(expectRoundTrip(Declaration, full, 'declaration')).toEqual(full);
  });

  it('round-trips a first declaration that carries the overlay and nothing else', () => {
    expect(expectRoundTrip(Declaration, overlayOnly, 'declaration')).toEqual(overlayOnly);
  });

  it('round-trips a final declaration that names nothing', () => {
    expect(expectRoundTrip(Declaration, final, 'declaration')).toEqual(final);
  });

  it('round-trips a declaration handing back what a rebuilt host used to own', () => {
    const previously_owned = { resources: [{ key: 'file:/etc/motd', shape: 'file', digest: 'e'.repeat(64), recorded_at: '2026-08-20T10:00:00Z' }] };
    expect(expectRoundTrip(Declaration, { ...full, previously_owned }, 'declaration')).toMatchObject({ previously_owned });
  });

  it('applies resource defaults, so the signed payload says everything the host will do', () => {
    const parsed = parseContract(Declaration, { ...full, resources: [{ shape: 'directory', path: '/srv/www' }] }, 'declaration');
    expect(parsed.resources[0]).toEqual({ shape: 'directory', path: '/srv/www', mode: '0755', owner: 'root', group: 'root' });
  });

  it.each<RefusalCase>([
    { name: 'a negative epoch', input: { ...full, epoch: -1 }, path: 'declaration.epoch', says: /must not be negative/ },
    { name: 'generation zero', input: { ...full, generation: 0 }, path: 'declaration.generation', says: /start at 1/ },
    { name: 'an unknown kind', input: { ...full, kind: 'partial' }, path: 'declaration.kind' },
    { name: 'an issue time without a zone', input: { ...full, issued_at: '2026-08-27T14:10:00' }, path: 'declaration.issued_at', says: /UTC time/ },
    { name: 'a node name that is not a DNS label', input: { ...full, node: 'Workstation.local' }, path: 'declaration.node', says: /node name/ },
    { name: 'a bad mode deep in a resource', input: { ...full, resources: [htop, htop, { ...motd, mode: 'rw-r--r--' }] }, path: 'declaration.resources[2].mode', says: /expected an octal mode like "0644"/ },
    { name: 'two resources with one key', input: { ...full, resources: [motd, htop, motd] }, path: 'declaration.resources[2]', says: /duplicate resource key "file:\/etc\/motd"/ },
    { name: 'an overlay declaration without the overlay', input: { ...overlayOnly, overlay: undefined }, path: 'declaration.overlay', says: /carries the overlay/ },
    { name: 'an overlay declaration carrying a package', input: { ...overlayOnly, resources: [htop] }, path: 'declaration.resources[0].shape', says: /carries only the overlay's files, directories and services, not a package/ },
    { name: 'a final declaration that still names resources', input: { ...final, resources: [htop] }, path: 'declaration.resources', says: /names nothing/ },
    { name: 'a final declaration carrying an overlay', input: { ...final, overlay }, path: 'declaration.overlay', says: /names nothing/ },
    { name: 'a bad key in the overlay', input: { ...full, overlay: { ...overlay, public_key: 'not-a-key' } }, path: 'declaration.overlay.public_key', says: /32 bytes/ },
    { name: 'a signature inside the payload', input: { ...full, signature: 'abc' }, path: 'declaration.signature', says: /unknown field/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(Declaration, input, 'declaration', path, says);
  });
});
