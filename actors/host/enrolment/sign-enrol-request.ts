import { canonicalBytes } from '../../../schema/canonical';
import { EnrolRequest } from '../../../schema/enrolment';
import { parseContract } from '../../../schema/parse';
import { encodeBase64 } from '../../shared/crypto/base64';
import { ed25519Sign } from '../../shared/crypto/ed25519';
import { signingKeyPairOf, type KeyInput } from '../../shared/crypto/keys';

/** Every field of an enrolment request but its proof. */
export type UnsignedEnrolRequest = Omit<EnrolRequest, 'proof'>;

/**
 * The enrolment request with its proof: the new identity's Ed25519 signature (detached, base64)
 * over the canonical JSON bytes of every other field. It shows the controller that whoever
 * sends this public key holds its private half, and binds the key to the token, profile and
 * WireGuard key sent with it. Checked against the contract before it leaves, so a fault here is
 * found on this machine rather than refused by the controller.
 */
export function signEnrolRequest(fields: UnsignedEnrolRequest, secretKey: KeyInput): EnrolRequest {
  const pair = signingKeyPairOf(secretKey, 'the new node key');
  const proof = encodeBase64(ed25519Sign(canonicalBytes(fields), pair.seed));
  return parseContract(EnrolRequest, { ...fields, proof }, 'enrolment request', {
    next: 'this machine could not describe itself within the enrolment contract: report it with the output of nox-mesh-host profile --json',
  });
}
