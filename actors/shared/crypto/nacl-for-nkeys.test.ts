import { randomBytes } from 'node:crypto';
import tweetnacl from 'tweetnacl';
import { fromSeed as nkeyFromSeed } from '@nats-io/nkeys';
import nacl from './nacl-for-nkeys';
import { nkeySeedOf } from './nkey';

describe('the tweetnacl the host bundle gives nkeys', () => {
  const seeds = Array.from({ length: 20 }, () => new Uint8Array(randomBytes(32)));

  it('makes the key pair tweetnacl makes from a seed', () => {
    for (const seed of seeds) {
      const ours = nacl.sign.keyPair.fromSeed(seed);
      const theirs = tweetnacl.sign.keyPair.fromSeed(seed);
      expect(Buffer.from(ours.publicKey).toString('hex')).toBe(Buffer.from(theirs.publicKey).toString('hex'));
      expect(Buffer.from(ours.secretKey).toString('hex')).toBe(Buffer.from(theirs.secretKey).toString('hex'));
    }
  });

  it('signs as tweetnacl does, and each verifies the other', () => {
    for (const [index, seed] of seeds.entries()) {
      const message = new Uint8Array(randomBytes(index * 7));
      const pair = tweetnacl.sign.keyPair.fromSeed(seed);
      const ours = nacl.sign.detached(message, pair.secretKey);
      const theirs = tweetnacl.sign.detached(message, pair.secretKey);
      expect(Buffer.from(ours).toString('hex')).toBe(Buffer.from(theirs).toString('hex'));
      expect(nacl.sign.detached.verify(message, theirs, pair.publicKey)).toBe(true);
      expect(tweetnacl.sign.detached.verify(message, ours, pair.publicKey)).toBe(true);
    }
  });

  it('refuses a signature of another message, and a secret key of the wrong size', () => {
    const pair = nacl.sign.keyPair.fromSeed(seeds[0] as Uint8Array);
    const signature = nacl.sign.detached(new Uint8Array([1, 2, 3]), pair.secretKey);
    expect(nacl.sign.detached.verify(new Uint8Array([1, 2, 4]), signature, pair.publicKey)).toBe(false);
    expect(() => nacl.sign.detached(new Uint8Array([1]), new Uint8Array(32))).toThrow(/secret key size/);
    expect(() => nacl.sign.keyPair.fromSeed(new Uint8Array(31))).toThrow(/seed size/);
  });

  it('gives random bytes of the length asked for', () => {
    const bytes = nacl.randomBytes(48);
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(bytes).toHaveLength(48);
    expect(Buffer.from(bytes).equals(Buffer.from(nacl.randomBytes(48)))).toBe(false);
  });

  it('refuses curve encryption with the reason', () => {
    expect(() => nacl.box(new Uint8Array(1), new Uint8Array(24), new Uint8Array(32), new Uint8Array(32))).toThrow(/not part of the node host/);
    expect(() => nacl.scalarMult.base(new Uint8Array(32))).toThrow(/not part of the node host/);
  });

  it('signs a server nonce through nkeys exactly as the real tweetnacl does', () => {
    // nkeys' own key pair, as the NATS client's nkey authenticator makes it, on tweetnacl.
    const seed = seeds[1] as Uint8Array;
    const nonce = new TextEncoder().encode('bm9uY2UtZnJvbS10aGUtc2VydmVy');
    const viaNkeys = nkeyFromSeed(nkeySeedOf(seed)).sign(nonce);
    const pair = nacl.sign.keyPair.fromSeed(seed);
    expect(Buffer.from(nacl.sign.detached(nonce, pair.secretKey)).toString('hex')).toBe(Buffer.from(viaNkeys).toString('hex'));
  });
});
