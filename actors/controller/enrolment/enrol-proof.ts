import { canonicalBytes } from '../../../schema/canonical';
import type { EnrolRequest } from '../../../schema/enrolment';
import { decodeBase64 } from '../../shared/crypto/base64';
import { ed25519Verify } from '../../shared/crypto/ed25519';

/**
 * The bytes an enrolment request's `proof` signs: the canonical JSON of every field but
 * `proof` itself. The host signs these with the identity key it presents.
 */
export function enrolProofBytes(request: Omit<EnrolRequest, 'proof'> & { proof?: string }): Uint8Array {
  const { proof: _proof, ...signed } = request;
  return canonicalBytes(signed);
}

/**
 * True when `proof` is a valid Ed25519 signature by `public_key` over the request's other
 * fields: the identity the mesh is about to record is one whose private half the enrolling
 * machine holds, so nobody can enrol a key they do not have.
 */
export function enrolProofHolds(request: EnrolRequest): boolean {
  const signature = decodeBase64(request.proof);
  const key = decodeBase64(request.public_key);
  if (signature === undefined || signature.length !== 64 || key === undefined || key.length !== 32) return false;
  return ed25519Verify(signature, enrolProofBytes(request), key);
}
