import * as z from 'zod';
import { AbsolutePath, Base64Bytes32, Sha256Hex } from './primitives';

/**
 * `<dir>/mesh.json`, written by `mesh-control init --dir DIR` and read by every other verb:
 * where the broker is and how it is pinned, where the controller's keys are, which store it
 * uses, and the overlay's address pool. Paths are absolute. It holds no secret itself: keys
 * are in their own 0600 files beside it.
 */
export const ControllerConfig = z.strictObject({
  format: z.literal(1, { error: 'expected format 1: this mesh directory was made by another version of mesh-control' }),
  broker: z.strictObject({
    /** How hosts and the CLI reach the broker, as printed in tokens. */
    url: z.url({ protocol: /^tls$/, error: 'expected a broker address like "tls://mesh.example:4222"' }),
    fingerprint: Sha256Hex,
    cert_file: AbsolutePath,
    config_file: AbsolutePath,
    /** The directory `mesh-control broker` runs nats-server from. */
    dir: AbsolutePath,
    /**
     * Every server of a cluster, as hosts and controllers reach them (`url` is one of them),
     * written by `mesh-control broker cluster`; absent for one server. Every server presents
     * the certificate `fingerprint` pins.
     */
    servers: z.array(z.url({ protocol: /^tls$/, error: 'expected a broker address like "tls://mesh.example:4222"' })).min(2).max(7).optional(),
    /** How many servers keep each stream and bucket: the cluster's size, 1 (absent) for one server. */
    replicas: z.int().min(1).max(5).optional(),
  }),
  controller: z.strictObject({
    public_key: Base64Bytes32,
    signing_key_file: AbsolutePath,
    nkey_seed_file: AbsolutePath,
  }),
  operator: z.strictObject({
    nkey_seed_file: AbsolutePath,
  }),
  store: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('pglite'), dir: AbsolutePath }),
    z.strictObject({ kind: z.literal('postgres'), url: z.string().regex(/^postgres(?:ql)?:\/\//, { error: 'expected a postgres://… URL' }) }),
  ]),
  overlay: z.strictObject({
    /** The pool node addresses are assigned from, e.g. 10.77.0.0/16. */
    cidr: z.string().regex(/^\d{1,3}(?:\.\d{1,3}){3}\/(?:[89]|[12]\d|30)$/, { error: 'expected an IPv4 pool like "10.77.0.0/16"' }),
    listen_port: z.int().min(1).max(65535),
    interface: z.string().regex(/^[a-z][a-z0-9]{0,14}$/, { error: 'expected an interface name like "mesh0"' }),
  }),
});
/** See {@link ControllerConfig}. */
export type ControllerConfig = z.infer<typeof ControllerConfig>;
