import { decodeBase64, encodeBase64 } from './base64';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ed25519PublicKey } from './ed25519';
import { KeyMalformed } from './key-errors';

/** A key as it travels: standard base64 text, or the raw bytes. */
export type KeyInput = string | Uint8Array;

/** Length of an Ed25519 public key, a seed, and (twice that) libsodium's secret key. */
export const KEY_BYTES = 32;

/**
 * The controller's signing key pair, as stored: both halves base64. `secret_key` is the 32-byte
 * Ed25519 seed, from which the whole key pair is derived again when signing; keeping only the
 * seed means the stored public half can never disagree with the secret one.
 */
export interface SigningKeyPair {
  public_key: string;
  secret_key: string;
}

/**
 * A node's own identity: an Ed25519 key pair, `secret_key` being its 32-byte seed, and the
 * NATS user nkey of the same key (the shape of the host store's `identity`, less the node name).
 * The one key signs the broker's nonce, receives sealed secrets (in its X25519 form) and is
 * what the controller records at enrolment.
 */
export interface NodeIdentity {
  public_key: string;
  secret_key: string;
  nkey_public: string;
}

/** A fresh Ed25519 key pair for a controller to sign declarations with. */
export function generateSigningKeyPair(): SigningKeyPair {
  const seed = new Uint8Array(randomBytes(KEY_BYTES));
  return { public_key: encodeBase64(ed25519PublicKey(seed)), secret_key: encodeBase64(seed) };
}


/** The base64 public key belonging to a seed or secret key. */
export function publicKeyOf(secret: KeyInput, which = 'the secret key'): string {
  return encodeBase64(signingKeyPairOf(secret, which).publicKey);
}

/** A 32-byte Ed25519 public key from base64 text or bytes, or KeyMalformed naming `which`. */
export function publicKeyBytes(key: KeyInput, which = 'the public key'): Uint8Array {
  return exactBytes(key, KEY_BYTES, which);
}

/**
 * The key pair for a secret given either as the 32-byte seed or as libsodium's 64-byte secret
 * key (seed followed by public key): the public key, the seed that signs, and `secretKey` in
 * libsodium's 64-byte form. A 64-byte key whose public half does not belong to its seed is
 * refused: signing with it would produce signatures under a key nobody pinned.
 */
export function signingKeyPairOf(secret: KeyInput, which = 'the secret key'): { publicKey: Uint8Array; secretKey: Uint8Array; seed: Uint8Array } {
  const bytes = toBytes(secret, which);
  if (bytes.length !== KEY_BYTES && bytes.length !== 2 * KEY_BYTES) {
    throw new KeyMalformed(which, `it is ${bytes.length} bytes, expected a 32-byte seed or a 64-byte secret key`);
  }
  const seed = bytes.slice(0, KEY_BYTES);
  const publicKey = ed25519PublicKey(seed);
  if (bytes.length === 2 * KEY_BYTES && !timingSafeEqual(bytes.subarray(KEY_BYTES), publicKey)) {
    throw new KeyMalformed(which, 'its public half does not belong to its secret half');
  }
  const secretKey = new Uint8Array(2 * KEY_BYTES);
  secretKey.set(seed, 0);
  secretKey.set(publicKey, KEY_BYTES);
  return { publicKey, secretKey, seed };
}

/** Key bytes of exactly `length`, from base64 text or bytes. */
export function exactBytes(key: KeyInput, length: number, which: string): Uint8Array {
  const bytes = toBytes(key, which);
  if (bytes.length !== length) throw new KeyMalformed(which, `it is ${bytes.length} bytes, expected ${length}`);
  return bytes;
}

function toBytes(key: KeyInput, which: string): Uint8Array {
  if (key instanceof Uint8Array) return key;
  if (typeof key !== 'string') throw new KeyMalformed(which, `expected base64 text, found ${key === null ? 'null' : typeof key}`);
  const bytes = decodeBase64(key.trim());
  if (bytes === undefined) throw new KeyMalformed(which, 'it is not base64 text');
  return bytes;
}
