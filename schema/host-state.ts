import * as z from 'zod';
import { BrokerUrls } from './broker-urls';
import { Briefing } from './briefing';
import { Owned } from './owned';
import { FileResource, Resource, ResourceKey, ServiceResource } from './resource';
import { AbsolutePath, Base64Bytes32, Count, HostVersion, IsoTime, NodeName, Sha256Hex } from './primitives';

/**
 * Who this node is. `secret_key` is the node's Ed25519 seed: the store file is 0600 and
 * root's, and the identity is the node's own (nothing outlives its revocation at the broker).
 * Never log this object.
 */
export const HostIdentity = z.strictObject({
  node: NodeName,
  nkey_public: z.string().regex(/^U[A-Z2-7]{55}$/, { error: 'expected a NATS user nkey ("U" and 55 base32 characters)' }),
  public_key: Base64Bytes32,
  secret_key: Base64Bytes32,
});
/** See {@link HostIdentity}. */
export type HostIdentity = z.infer<typeof HostIdentity>;

/**
 * What the enrolment token pinned: the broker and its certificate fingerprint (checked before
 * anything is sent), and the controller key every declaration must be signed with.
 */
export const HostPins = z.strictObject({
  broker_url: z.url({
    protocol: /^tls$/,
    error: 'expected a broker address like "tls://broker.example:4222"',
  }),
  /**
   * Every server of the broker's cluster, `broker_url` among them; absent for one server. The
   * link tries them in turn, one per attempt. Set by the token, replaced by a signed
   * declaration that names them (`broker_urls`).
   */
  broker_urls: BrokerUrls.optional(),
  broker_fingerprint: Sha256Hex,
  /**
   * The broker's next certificate, pinned beside the current one while the broker's certificate
   * is rotated: set and cleared only by a signed declaration (`broker_fingerprints`).
   */
  next_broker_fingerprint: Sha256Hex.optional(),
  controller_public_key: Base64Bytes32,
});
/** See {@link HostPins}. */
export type HostPins = z.infer<typeof HostPins>;

/**
 * The last declaration applied, kept as the signed envelope it arrived in: the host verifies
 * it again on load rather than trusting a file, so its shape here is left to the envelope
 * contract.
 */
export const LastDeclaration = z.strictObject({
  envelope: z.unknown(),
  applied_generation: z.int().min(1, { error: 'generations start at 1' }),
  digest: Sha256Hex,
});
/** See {@link LastDeclaration}. */
export type LastDeclaration = z.infer<typeof LastDeclaration>;

/**
 * The host store, `state.json` under the state directory (`/var/lib/mesh-host`), read and
 * written only by the host. Locally authoritative: a disconnected node operates from it alone.
 * `format` is bumped when the layout changes, so an older host refuses a newer file whole.
 */
export const HostState = z.strictObject({
  format: z.literal(1, { error: 'expected format 1: this store was written by another version of nox-mesh-host' }),
  identity: HostIdentity.nullable(),
  pins: HostPins.nullable(),
  last_declaration: LastDeclaration.nullable(),
  highest_epoch: Count,
  sequence: Count,
  report_sequence: Count,
  owned: Owned,
  /**
   * Keys the host has begun to apply and not yet recorded. Written before the host touches the
   * machine for a resource, so a host killed mid-apply knows on restart that what it finds
   * there is its own work, not something to adopt.
   */
  applying: z.array(ResourceKey),
  /**
   * Directories the host created on the way to a declared path, that no resource declares: the
   * host made them, so it takes them away again, once they are empty and nothing it holds lies
   * under them (after a release, nothing). Missing in a store from before they were kept: none.
   */
  made_directories: z.array(AbsolutePath).default([]),
  /**
   * Resources a person applied by hand (`nox-mesh-host apply FILE`), held and drift-corrected
   * alongside the controller's declaration until the next declaration arrives: the controller
   * decides what a node holds, and a hand apply is a repair, not a second source of truth.
   */
  local_resources: z.array(Resource),
  known_good_version: HostVersion.nullable(),
  briefing: Briefing.nullable(),
  last_linked_at: IsoTime.nullable(),
  /**
   * When this host enrolled on an empty store (a new machine, or one whose store was lost):
   * the first full declaration after it may hand back what the node owned before
   * (`previously_owned`), and only that declaration is read for it. Absent otherwise, and
   * cleared once that declaration is taken: a host whose store is intact never reads what the
   * controller says it owned.
   */
  store_rebuilt_at: IsoTime.optional(),
  /**
   * Services owed a restart: a pass is about to write a file one of them names in `restart_on`.
   * Written before the file is, and cleared once the service has been restarted (or started)
   * after it, so a host killed between the write and the restart still restarts it on its next
   * pass: the file then already matches, and nothing else would say the service has not read
   * it (a rotated credential the provider no longer accepts). Absent when none is owed.
   */
  restarts_owed: z.array(ServiceResource.shape.name).optional(),
});
/** See {@link HostState}. */
export type HostState = z.infer<typeof HostState>;

/**
 * A large value kept beside the store rather than in it: `<state-dir>/content/<sha256>` holds
 * its JSON, and `stored` is the SHA-256 of those bytes, checked when the store is read. The
 * store holds a reference in place of a hand-applied file's content over 4 KiB and of the last
 * declaration's envelope over 4 KiB, so state.json (written twice on every save) does not grow
 * with the size of what the host applies: it grows with the number of resources alone.
 */
export const StoredContent = z.strictObject({ stored: Sha256Hex });
/** See {@link StoredContent}. */
export type StoredContent = z.infer<typeof StoredContent>;

/** A hand-applied resource as state.json holds it: a file's content may be a StoredContent. */
export const HeldResource = z.union([Resource, FileResource.extend({ content: StoredContent })]);
/** See {@link HeldResource}. */
export type HeldResource = z.infer<typeof HeldResource>;

/**
 * The host store as state.json holds it: {@link HostState} with large values referred to (see
 * {@link StoredContent}); `last_declaration.envelope` may be `{"stored": "<sha256>"}` too.
 * A store written before references were kept has everything inline, and reads the same.
 */
export const StoredHostState = HostState.extend({ local_resources: z.array(HeldResource) });
/** See {@link StoredHostState}. */
export type StoredHostState = z.infer<typeof StoredHostState>;

/** The store of a host that has never enrolled nor applied anything (`hosted`). */
export function emptyHostState(): HostState {
  return {
    format: 1,
    identity: null,
    pins: null,
    last_declaration: null,
    highest_epoch: 0,
    sequence: 0,
    report_sequence: 0,
    owned: { resources: [] },
    applying: [],
    made_directories: [],
    local_resources: [],
    known_good_version: null,
    briefing: null,
    last_linked_at: null,
  };
}
