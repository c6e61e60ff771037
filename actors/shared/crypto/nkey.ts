import { fromSeed, type KeyPair } from '@nats-io/nkeys';
import { encodeBase32 } from './base32';
import { generateSigningKeyPair, publicKeyBytes, signingKeyPairOf, type KeyInput, type NodeIdentity } from './keys';

// nkey prefix bytes: 'U' for a user public key, 'S' + 'U' for a user seed (nats-io/nkeys).
const USER = 20 << 3;
const SEED = 18 << 3;
const RFC4648 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * The NATS user nkey ('U…') of an Ed25519 public key. A node's identity key is its broker user:
 * the controller adds this string to the broker's authorization, and the node proves it holds
 * the key by signing the server's nonce with `nkeyPairOf(seed)`.
 */
export function nkeyPublicOf(publicKey: KeyInput): string {
  return nkeyEncode([USER], publicKeyBytes(publicKey, 'the node public key'));
}

/**
 * The nkey seed text ('SU…') of a node's Ed25519 seed, as bytes: what the NATS client's
 * `nkeyAuthenticator` takes. It is secret; never log it.
 */
export function nkeySeedOf(seed: KeyInput): Uint8Array {
  const raw = signingKeyPairOf(seed, 'the node seed').seed;
  return new TextEncoder().encode(nkeyEncode([SEED | (USER >> 5), (USER & 31) << 3], raw));
}

/** An nkeys key pair for a node's seed, whose public key is `nkeyPublicOf` of the node's key. */
export function nkeyPairOf(seed: KeyInput): KeyPair {
  return fromSeed(nkeySeedOf(seed));
}

/** A fresh identity for a node that is enrolling: its key pair and its broker user nkey. */
export function generateNodeIdentity(): NodeIdentity {
  const pair = generateSigningKeyPair();
  return { ...pair, nkey_public: nkeyPublicOf(pair.public_key) };
}

function nkeyEncode(prefix: number[], payload: Uint8Array): string {
  const raw = new Uint8Array(prefix.length + payload.length + 2);
  raw.set(prefix, 0);
  raw.set(payload, prefix.length);
  const crc = crc16(raw.subarray(0, prefix.length + payload.length));
  raw[raw.length - 2] = crc & 0xff;
  raw[raw.length - 1] = crc >> 8;
  // RFC 4648 base32 without padding, as nkeys spells keys.
  return encodeBase32(raw, RFC4648);
}

// CRC-16/XMODEM, the checksum nkeys appends (little-endian).
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
