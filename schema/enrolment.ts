import * as z from 'zod';
import { Inventory } from './inventory';
import { Base64Bytes32, HostVersion, NodeName } from './primitives';
import { Profile } from './profile';

/**
 * What a host sends on `mesh.enrol.<token id>` as the token's one-time broker user: the token's
 * secret (the controller compares its hash), the identity the host has just generated, its
 * WireGuard public key (the overlay is assigned centrally; only the public half leaves the
 * machine), and what the machine is — the profile is the input the controller decides from.
 *
 * `proof` is the host's Ed25519 signature over the canonical JSON of every other field, so the
 * identity recorded is one whose private half the enrolling machine holds.
 */
export const EnrolRequest = z.strictObject({
  format: z.literal('mesh-enrol-1', { error: 'expected format "mesh-enrol-1": upgrade the host or the controller' }),
  token_id: z.string().regex(/^[0-9a-f]{16}$/, { error: 'expected a token id: 16 lowercase hex digits' }),
  secret: z.string().regex(/^[A-Za-z0-9_-]{43}$/, { error: 'expected the token secret: 43 base64url characters' }),
  public_key: Base64Bytes32,
  nkey_public: z.string().regex(/^U[A-Z2-7]{55}$/, { error: 'expected a NATS user nkey ("U" and 55 base32 characters)' }),
  wireguard_public_key: Base64Bytes32,
  hostname: z.string().min(1).max(253),
  profile: Profile,
  inventory: Inventory,
  version_running: HostVersion,
  proof: z.string().regex(/^[A-Za-z0-9+/]{86}==$/, { error: 'expected a base64 Ed25519 signature' }),
});
/** See {@link EnrolRequest}. */
export type EnrolRequest = z.infer<typeof EnrolRequest>;

/** Why the controller refused an enrolment: each is something the person with the token can act on. */
export const EnrolRefusal = z.enum([
  'token_unknown', // no such token: mistyped id, or it was never issued by this controller
  'token_expired', // issued, not used in time
  'token_used', // already consumed (single use)
  'token_secret_wrong', // the id exists but the secret does not match it
  'proof_invalid', // the request was not signed by the key it presents
  'malformed', // the request does not match the contract
  'unavailable', // the controller could not finish (store or broker): try again
]);
/** See {@link EnrolRefusal}. */
export type EnrolRefusal = z.infer<typeof EnrolRefusal>;

/** The controller's answer on the enrolment inbox. */
export const EnrolReply = z.discriminatedUnion('ok', [
  z.strictObject({
    ok: z.literal(true),
    /** The name this machine now has in the mesh. */
    node: NodeName,
  }),
  z.strictObject({
    ok: z.literal(false),
    refusal: EnrolRefusal,
    /** What happened, said for a person. */
    message: z.string().max(1024),
    /** The next step for that person. */
    next: z.string().max(1024),
  }),
]);
/** See {@link EnrolReply}. */
export type EnrolReply = z.infer<typeof EnrolReply>;
