import { randomBytes } from 'node:crypto';
import { digestOf } from './canonical';
import { AbsolutePath, Base64Bytes32, IsoTime, NodeName, Sha256Hex } from './primitives';

describe('AbsolutePath', () => {
  it.each(['/', '/etc/motd', '/srv/www/.well-known/acme', '/var/lib/mesh-host/state.json'])('accepts %s', (path) => {
    expect(AbsolutePath.safeParse(path).success).toBe(true);
  });

  it.each(['', 'etc/motd', '/etc/../shadow', '/etc/./motd', '/etc//motd', '/etc/', '/etc/mo\0td', `/${'a'.repeat(4095)}`])(
    'refuses %j',
    (path) => {
      expect(AbsolutePath.safeParse(path).success).toBe(false);
    },
  );
});

describe('NodeName', () => {
  it.each(['a', 'workstation', 'node-7', '0', 'a'.repeat(63)])('accepts %s', (name) => {
    expect(NodeName.safeParse(name).success).toBe(true);
  });

  it.each(['', 'Workstation', '-node', 'node-', 'node_7', 'node.mesh', 'a'.repeat(64)])('refuses %j', (name) => {
    expect(NodeName.safeParse(name).success).toBe(false);
  });
});

describe('Base64Bytes32', () => {
  it('accepts any 32 random bytes as Node encodes them', () => {
    for (let i = 0; i < 50; i += 1) expect(Base64Bytes32.safeParse(randomBytes(32).toString('base64')).success).toBe(true);
  });

  it.each([
    ['31 bytes', Buffer.alloc(31, 1).toString('base64')],
    ['33 bytes', Buffer.alloc(33, 1).toString('base64')],
    ['url-safe alphabet', Buffer.alloc(32, 0xfb).toString('base64url') + '='],
    ['no padding', Buffer.alloc(32, 1).toString('base64').slice(0, 43)],
    ['non-zero unused bits', 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQF='],
  ])('refuses %s', (_name, text) => {
    expect(Base64Bytes32.safeParse(text).success).toBe(false);
  });
});

describe('Sha256Hex', () => {
  it('accepts the digests digestOf makes', () => {
    expect(Sha256Hex.safeParse(digestOf({ a: 1 })).success).toBe(true);
  });

  it('refuses upper case, a prefix and the wrong length', () => {
    expect(Sha256Hex.safeParse(digestOf({ a: 1 }).toUpperCase()).success).toBe(false);
    expect(Sha256Hex.safeParse(`sha256:${digestOf({ a: 1 })}`).success).toBe(false);
    expect(Sha256Hex.safeParse('ab'.repeat(31)).success).toBe(false);
  });
});

describe('IsoTime', () => {
  it('accepts what toISOString writes', () => {
    expect(IsoTime.safeParse(new Date(Date.UTC(2026, 7, 27, 14, 2)).toISOString()).success).toBe(true);
  });

  it.each(['2026-08-27T14:02:00+02:00', '2026-08-27 14:02:00Z', '2026-08-27', '2026-02-30T00:00:00Z'])('refuses %s', (text) => {
    expect(IsoTime.safeParse(text).success).toBe(false);
  });
});
