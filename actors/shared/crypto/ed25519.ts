/*
 * Ed25519 through Node's own OpenSSL rather than libsodium's WebAssembly: a host that verifies
 * declarations all day then never loads libsodium, about 10 MB less resident. Ed25519 signing is
 * deterministic, so the signatures are the same bytes libsodium makes from the same seed.
 *
 * Verifying is as strict as libsodium's `crypto_sign_verify_detached`, which OpenSSL alone is
 * not: OpenSSL checks that S is below the group order and that R re-encodes exactly, but takes a
 * public key or an R of small order, and a public key whose y is not reduced. Those are refused
 * here before OpenSSL is asked, so one key and one signature mean the same on every machine in
 * the mesh, whichever library checks them. `ed25519.test.ts` holds the two libraries to the same
 * answers.
 */

import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** Length of an Ed25519 signature: R (a point) then S (a scalar), 32 bytes each. */
export const SIGNATURE_BYTES = 64;

// DER framing of a bare 32-byte Ed25519 seed (PKCS #8) and public key (SPKI), OID 1.3.101.112:
// how OpenSSL takes and gives raw keys.
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

// The group order L = 2^252 + 27742317777372353535851937790883648493, little-endian.
const ORDER = Buffer.from('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010', 'hex');

// The encodings of the points of order 1, 2, 4 and 8 (and the non-canonical spellings of two of
// them), compared with the sign bit of x ignored: libsodium's blocklist, so a key or an R that
// libsodium refuses is refused here too.
const SMALL_ORDER = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
].map((hex) => Buffer.from(hex, 'hex'));

/** The 32-byte Ed25519 public key of a 32-byte seed. */
export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  return keyPairOf(seed).publicKey.slice();
}

/** The detached Ed25519 signature of `message` by the key of the 32-byte `seed`. */
export function ed25519Sign(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, keyPairOf(seed).privateKey));
}

/**
 * True when `signature` is a valid, canonical Ed25519 signature of `message` by `publicKey`
 * (32 bytes), with the same refusals as libsodium. Never throws on bad input: a key that is not a
 * point, a signature of the wrong length, all are simply not valid.
 */
export function ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_BYTES || publicKey.length !== 32) return false;
  const r = signature.subarray(0, 32);
  const s = signature.subarray(32);
  if (!scalarIsCanonical(s) || hasSmallOrder(r)) return false;
  if (!pointIsCanonical(publicKey) || hasSmallOrder(publicKey)) return false;
  const key = publicKeyObject(publicKey);
  if (key === undefined) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

// The controller signs every declaration with its one key, and a host its broker nonces with its
// own: OpenSSL's key object and the public half are kept for the few seeds in use, since making
// them costs about ten times the signature (0.7 ms against 0.06 on this project's machines). They
// are found by a digest of the seed, so no copy of the seed itself is kept beside OpenSSL's.
const privateKeys = new Map<string, { privateKey: KeyObject; publicKey: Uint8Array }>();

/** Keys of either kind kept, the oldest let go first. */
const KEPT_KEYS = 16;

function keyPairOf(seed: Uint8Array): { privateKey: KeyObject; publicKey: Uint8Array } {
  if (seed.length !== 32) throw new Error(`an Ed25519 seed is 32 bytes, this one is ${seed.length}`);
  const id = createHash('sha256').update(seed).digest('hex');
  let pair = privateKeys.get(id);
  if (pair === undefined) {
    const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
    pair = { privateKey, publicKey: new Uint8Array(spki.subarray(SPKI_PREFIX.length)) };
    if (privateKeys.size >= KEPT_KEYS) privateKeys.delete(privateKeys.keys().next().value as string);
    privateKeys.set(id, pair);
  }
  return pair;
}

// A host verifies against the one pinned controller key, and the controller against a few keys
// at a time: the parsed key is kept, a handful at most.
const keyObjects = new Map<string, KeyObject>();

function publicKeyObject(publicKey: Uint8Array): KeyObject | undefined {
  const id = Buffer.from(publicKey).toString('hex');
  let key = keyObjects.get(id);
  if (key === undefined) {
    try {
      key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    } catch {
      return undefined;
    }
    if (keyObjects.size >= KEPT_KEYS) keyObjects.delete(keyObjects.keys().next().value as string);
    keyObjects.set(id, key);
  }
  return key;
}

/** S below the group order L, compared as 256-bit little-endian integers. */
function scalarIsCanonical(s: Uint8Array): boolean {
  for (let index = 31; index >= 0; index -= 1) {
    if (s[index] !== ORDER[index]) return s[index] < ORDER[index];
  }
  return false;
}

/** y (the encoding less its sign bit) below p = 2^255 − 19, as libsodium's ge25519_is_canonical. */
function pointIsCanonical(point: Uint8Array): boolean {
  if ((point[31] & 0x7f) !== 0x7f) return true;
  for (let index = 30; index > 0; index -= 1) if (point[index] !== 0xff) return true;
  return point[0] < 0xed;
}

function hasSmallOrder(point: Uint8Array): boolean {
  return SMALL_ORDER.some((bad) => {
    for (let index = 0; index < 31; index += 1) if (point[index] !== bad[index]) return false;
    return (point[31] & 0x7f) === bad[31];
  });
}
