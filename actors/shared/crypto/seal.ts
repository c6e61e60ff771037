import { OperatorError } from '../operator-error';
import { decodeBase64, encodeBase64 } from './base64';
import { KeyMalformed } from './key-errors';
import { publicKeyBytes, signingKeyPairOf, type KeyInput } from './keys';
import { sodium } from './sodium';

/**
 * Seals a secret to one node: an anonymous `crypto_box_seal` to the X25519 form of the node's
 * Ed25519 identity key, returned as base64. Only the holder of that node's seed can open it;
 * the sender keeps no key that could. A string is sealed as its UTF-8 bytes.
 */
export function sealToNode(secret: Uint8Array | string, nodeEd25519PublicKey: KeyInput): string {
  const s = sodium();
  const edPublic = publicKeyBytes(nodeEd25519PublicKey, 'the node public key');
  let curvePublic: Uint8Array;
  try {
    curvePublic = s.crypto_sign_ed25519_pk_to_curve25519(edPublic);
  } catch {
    throw new KeyMalformed('the node public key', 'it is not a point on Ed25519, so nothing can be sealed to it', 'check the key recorded for this node; re-enrol the node if its record is damaged');
  }
  return encodeBase64(s.crypto_box_seal(typeof secret === 'string' ? new TextEncoder().encode(secret) : secret, curvePublic));
}

/**
 * Opens a box sealed to this node with its seed (or 64-byte secret key). Fails with
 * SealedSecretUnopenable when the box was sealed to another key or was altered.
 */
export function openSealed(box: Uint8Array | string, nodeSeed: KeyInput): Uint8Array {
  const s = sodium();
  const bytes = typeof box === 'string' ? decodeBase64(box.trim()) : box;
  if (bytes === undefined) throw new SealedSecretUnopenable('it is not base64');
  if (bytes.length < s.crypto_box_SEALBYTES) throw new SealedSecretUnopenable(`it is ${bytes.length} bytes, shorter than any sealed box`);
  const pair = signingKeyPairOf(nodeSeed, 'the node seed');
  const curvePublic = s.crypto_sign_ed25519_pk_to_curve25519(pair.publicKey);
  const curveSecret = s.crypto_sign_ed25519_sk_to_curve25519(pair.secretKey);
  try {
    return s.crypto_box_seal_open(bytes, curvePublic, curveSecret);
  } catch {
    throw new SealedSecretUnopenable('it was sealed to another key, or altered after sealing');
  } finally {
    s.memzero(curveSecret);
  }
}

/** A sealed secret addressed to this node does not open with this node's key. */
export class SealedSecretUnopenable extends OperatorError {
  constructor(problem: string) {
    super(`a secret sealed for this node does not open with its key (${problem})`, {
      next: "nothing from it was used; if this machine's key was replaced (reinstall, re-cloned image), the controller still seals to the old one: re-enrol with a new token (mesh-control token issue --node NAME, then nox-mesh-host enrol --token …)",
    });
  }
}
