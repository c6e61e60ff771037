import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';

// DER framing of a bare 32-byte X25519 private key (PKCS #8) and public key (SPKI), OID 1.3.101.110.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

/**
 * The X25519 public key of a 32-byte private key, as libsodium's `crypto_scalarmult_base` gives
 * it (the private key clamped on the way, as RFC 7748 says), through Node's OpenSSL so that
 * enrolling does not load libsodium for one multiplication.
 */
export function x25519PublicKey(privateKey: Uint8Array): Uint8Array {
  if (privateKey.length !== 32) throw new Error(`an X25519 private key is 32 bytes, this one is ${privateKey.length}`);
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, privateKey]), format: 'der', type: 'pkcs8' });
  return new Uint8Array(createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length));
}

/** A fresh X25519 key pair: 32 random bytes and their public key, as `crypto_box_keypair` makes. */
export function generateX25519KeyPair(): { publicKey: Uint8Array; privateKey: Uint8Array } {
  const privateKey = new Uint8Array(randomBytes(32));
  return { publicKey: x25519PublicKey(privateKey), privateKey };
}
