import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import fc from 'fast-check';
import { ed25519PublicKey, ed25519Sign, ed25519Verify } from './ed25519';
import { ready, sodium } from './sodium';
import { generateX25519KeyPair, x25519PublicKey } from './x25519';

// Node's OpenSSL does the mesh's Ed25519 and X25519; libsodium, which did them before and still
// seals boxes, is the reference here. Every answer must be libsodium's answer.

beforeAll(async () => {
  await ready();
});

const L = (1n << 252n) + 27742317777372353535851937790883648493n;
const P = (1n << 255n) - 19n;

function littleEndian(value: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let index = 0; index < 32; index += 1) bytes[index] = Number((value >> BigInt(8 * index)) & 0xffn);
  return bytes;
}

function numberOf(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let index = 31; index >= 0; index -= 1) value = (value << 8n) | BigInt(bytes[index]);
  return value;
}

function libsodiumVerifies(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return sodium().crypto_sign_verify_detached(signature, message, publicKey);
  } catch {
    return false;
  }
}

function signedBy(seed: Uint8Array, message: Uint8Array): { signature: Uint8Array; publicKey: Uint8Array } {
  return { signature: ed25519Sign(message, seed), publicKey: ed25519PublicKey(seed) };
}

// The points of order dividing 8, and the non-canonical spellings libsodium also blocks; each
// with the sign bit of x clear and set.
const SMALL_ORDER_Y = [0n, 1n, P - 1n, P, P + 1n,
  0x05fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826n,
  0x7a03ac9277fdc74ec6cc392cfa53202a0f67100d760b3cba4fd84d3d706a17c7n];
const smallOrderEncodings = SMALL_ORDER_Y.flatMap((y) => {
  const plain = littleEndian(y);
  const signed = Uint8Array.from(plain);
  signed[31] |= 0x80;
  return [plain, signed];
});

describe('Ed25519 through Node', () => {
  test('derives the public key libsodium derives from the same seed', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (seed) => {
      expect(Buffer.from(ed25519PublicKey(seed))).toEqual(Buffer.from(sodium().crypto_sign_seed_keypair(seed).publicKey));
    }), { numRuns: 300 });
  });

  test('makes the very signature libsodium makes, and each library accepts the other\'s', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 300 }), (seed, message) => {
      const ours = ed25519Sign(message, seed);
      const theirs = sodium().crypto_sign_detached(message, sodium().crypto_sign_seed_keypair(seed).privateKey);
      expect(Buffer.from(ours)).toEqual(Buffer.from(theirs));
      const publicKey = ed25519PublicKey(seed);
      expect(ed25519Verify(theirs, message, publicKey)).toBe(true);
      expect(libsodiumVerifies(ours, message, publicKey)).toBe(true);
    }), { numRuns: 300 });
  });

  test('agrees with libsodium on every signature, message and key with one bit flipped', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(), fc.constantFrom('signature', 'message', 'key'), (seed, message, at, part) => {
      const { signature, publicKey } = signedBy(seed, message);
      const target = { signature, message, key: publicKey }[part as 'signature' | 'message' | 'key'];
      const flipped = Uint8Array.from(target);
      flipped[at % flipped.length] ^= 1 << (at % 8);
      const args: [Uint8Array, Uint8Array, Uint8Array] = [
        part === 'signature' ? flipped : signature,
        part === 'message' ? flipped : message,
        part === 'key' ? flipped : publicKey,
      ];
      expect(ed25519Verify(...args)).toBe(libsodiumVerifies(...args));
      expect(ed25519Verify(...args)).toBe(false);
    }), { numRuns: 1000 });
  });

  test('agrees with libsodium on random public keys, most of which are not points', () => {
    const message = new TextEncoder().encode('declaration');
    const { signature } = signedBy(randomBytes(32), message);
    for (let run = 0; run < 300; run += 1) {
      const key = new Uint8Array(randomBytes(32));
      expect(ed25519Verify(signature, message, key)).toBe(libsodiumVerifies(signature, message, key));
    }
  });

  test('refuses S at or above the group order, as libsodium does, where OpenSSL alone would take S + L if it fit', () => {
    const message = new TextEncoder().encode('declaration');
    const seed = new Uint8Array(randomBytes(32));
    const { signature, publicKey } = signedBy(seed, message);
    const s = numberOf(signature.subarray(32));
    for (const bad of [s + L, L, (1n << 256n) - 1n]) {
      if (bad >= 1n << 256n) continue;
      const malleated = Uint8Array.from(signature);
      malleated.set(littleEndian(bad), 32);
      expect(ed25519Verify(malleated, message, publicKey)).toBe(false);
      expect(libsodiumVerifies(malleated, message, publicKey)).toBe(false);
    }
  });

  test('refuses every public key of small order and every non-canonical one, as libsodium does', () => {
    const message = new TextEncoder().encode('declaration');
    const { signature } = signedBy(randomBytes(32), message);
    const nonCanonical = [P, P + 1n, P + 5n, (1n << 255n) - 1n].map(littleEndian);
    for (const key of [...smallOrderEncodings, ...nonCanonical]) {
      expect(libsodiumVerifies(signature, message, key)).toBe(false);
      expect(ed25519Verify(signature, message, key)).toBe(false);
    }
  });

  test('refuses a signature whose R is of small order, with the trivial forgeries that would pass against a small-order key', () => {
    const message = new TextEncoder().encode('declaration');
    const { publicKey } = signedBy(randomBytes(32), message);
    for (const r of smallOrderEncodings) {
      for (const s of [0n, 1n]) {
        const forged = new Uint8Array(64);
        forged.set(r, 0);
        forged.set(littleEndian(s), 32);
        expect(ed25519Verify(forged, message, publicKey)).toBe(false);
        expect(libsodiumVerifies(forged, message, publicKey)).toBe(false);
        // Against a small-order key the forgery would hold in a lax verifier: refused here.
        expect(ed25519Verify(forged, message, littleEndian(1n))).toBe(false);
      }
    }
  });

  test('refuses a key of small order even where R is an honest point: the forgery that passes OpenSSL alone', () => {
    // With A the identity, [k]A vanishes, so R = [a]B and S = a verify for every message.
    const seed = new Uint8Array(randomBytes(32));
    const a = Uint8Array.from(createHash('sha512').update(seed).digest().subarray(0, 32));
    a[0] &= 248;
    a[31] &= 127;
    a[31] |= 64;
    const forged = new Uint8Array(64);
    forged.set(ed25519PublicKey(seed), 0);
    forged.set(littleEndian(numberOf(a) % L), 32);
    const identity = littleEndian(1n);
    const message = new TextEncoder().encode('any declaration at all');
    const lax = verify(null, message, createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), identity]), format: 'der', type: 'spki' }), forged);

    expect(ed25519Verify(forged, message, identity)).toBe(false);
    expect(libsodiumVerifies(forged, message, identity)).toBe(false);
    // OpenSSL alone takes it (Node 20's OpenSSL 3): what the checks before it are for.
    expect(lax).toBe(true);
  });

  test('signs with each of many seeds in turn under its own key, keeping none of them mixed up', () => {
    const seeds = Array.from({ length: 40 }, () => new Uint8Array(randomBytes(32)));
    const message = new TextEncoder().encode('declaration');
    for (const round of [1, 2]) {
      for (const seed of seeds) {
        const expected = sodium().crypto_sign_seed_keypair(seed);
        const publicKey = ed25519PublicKey(seed);
        expect(Buffer.from(publicKey).equals(Buffer.from(expected.publicKey))).toBe(true);
        expect(Buffer.from(ed25519Sign(message, seed)).equals(Buffer.from(sodium().crypto_sign_detached(message, expected.privateKey)))).toBe(true);
        if (round === 1) publicKey.fill(0);
      }
    }
  });

  test('says false, without throwing, for a signature or key of the wrong length', () => {
    const message = new TextEncoder().encode('declaration');
    const { signature, publicKey } = signedBy(randomBytes(32), message);
    expect(ed25519Verify(signature.subarray(0, 63), message, publicKey)).toBe(false);
    expect(ed25519Verify(signature, message, publicKey.subarray(0, 31))).toBe(false);
    expect(ed25519Verify(signature, message, publicKey)).toBe(true);
  });
});

describe('X25519 through Node', () => {
  test('gives the public key libsodium\'s crypto_scalarmult_base gives, clamping as it does', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (privateKey) => {
      expect(Buffer.from(x25519PublicKey(privateKey))).toEqual(Buffer.from(sodium().crypto_scalarmult_base(privateKey)));
    }), { numRuns: 300 });
  });

  test('makes key pairs libsodium can box to and open with', () => {
    const pair = generateX25519KeyPair();
    const box = sodium().crypto_box_seal(new TextEncoder().encode('overlay'), pair.publicKey);
    expect(new TextDecoder().decode(sodium().crypto_box_seal_open(box, pair.publicKey, pair.privateKey))).toBe('overlay');
  });
});
