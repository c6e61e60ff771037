/*
 * What the NATS client's nkeys library asks of tweetnacl, on Node's own Ed25519: the host
 * bundle puts this module where nkeys requires `tweetnacl` (scripts/build-host.ts). nkeys signs
 * the server's nonce when the host logs in with its nkey; for that it takes a key pair from the
 * seed and a detached signature, which Ed25519 makes the same bytes whichever library computes
 * them. tweetnacl is 70 kB of pure JavaScript, parsed at every start and held for as long as the
 * host runs; ed25519.ts is already loaded to verify declarations.
 *
 * Curve (xkey) encryption, the rest of what nkeys can do with tweetnacl, has no use in the host
 * and is refused with a reason rather than carried. The checkout and the controller use
 * tweetnacl itself; nacl-for-nkeys.test.ts holds this module to its answers.
 */

import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { ed25519PublicKey, ed25519Sign, ed25519Verify } from './ed25519';

const SEED_BYTES = 32;

/** A tweetnacl signing key pair: the secret key is the seed followed by the public key. */
interface SignKeyPair {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

function fromSeed(seed: Uint8Array): SignKeyPair {
  if (seed.length !== SEED_BYTES) throw new Error('bad seed size');
  const publicKey = ed25519PublicKey(seed);
  const secretKey = new Uint8Array(SEED_BYTES * 2);
  secretKey.set(seed);
  secretKey.set(publicKey, SEED_BYTES);
  return { publicKey, secretKey };
}

function detached(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  if (secretKey.length !== SEED_BYTES * 2) throw new Error('bad secret key size');
  return ed25519Sign(message, secretKey.subarray(0, SEED_BYTES));
}

function verifyDetached(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  return ed25519Verify(signature, message, publicKey);
}

function curveRefused(..._args: unknown[]): never {
  throw new Error('curve (xkey) encryption is not part of the node host: it logs in with an Ed25519 nkey only');
}

const box = Object.assign(curveRefused, { open: curveRefused, keyPair: curveRefused, before: curveRefused });

/** The subset of tweetnacl's default export that nkeys uses, under the same names. */
const nacl = {
  randomBytes: (length: number): Uint8Array => new Uint8Array(cryptoRandomBytes(length)),
  sign: Object.assign(curveRefused, {
    detached: Object.assign(detached, { verify: verifyDetached }),
    keyPair: Object.assign(curveRefused, { fromSeed }),
  }),
  scalarMult: Object.assign(curveRefused, { base: curveRefused }),
  box,
};

export default nacl;
