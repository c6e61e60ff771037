import { encode } from '@nats-io/nkeys';
import { connect, type Authenticator, type NatsConnection } from '@nats-io/transport-node';
import { fingerprintsEqual, generateNodeIdentity, sodium, type NodeIdentity } from '../../actors/shared/crypto';
import { signingKeyPairOf } from '../../actors/shared/crypto/keys';
import { FingerprintMismatch, pinnedDial, probeBrokerCertificate } from '../../actors/shared/bus';
import { nodeInboxPrefix } from '../../actors/shared/bus/subjects';
import { startingServer } from '../../actors/host/link/pinned-attempt';

/** One simulated node: its name and its own identity (an Ed25519 key and the nkey user of it). */
export interface FleetMember {
  name: string;
  identity: NodeIdentity;
}

/** Where the simulated nodes connect: the broker, its certificate's fingerprint as a token pins it, and the certificate the probe read. */
export interface FleetBroker {
  url: string;
  /** Every server of a cluster (all presenting the one certificate); absent for one server. */
  urls?: readonly string[];
  fingerprint: string;
  certPem: string;
}

/**
 * The host's probe, made once for the whole fleet: the broker's certificate read with a bare
 * TLS ClientHello and compared with the pin (FingerprintMismatch when it differs). Every node
 * would read the same certificate; a probe per node would double the handshakes that bring a
 * fleet of thousands up on two cores, and nothing measured passes through it.
 */
export async function probeFleetBroker(url: string, fingerprint: string, urls?: readonly string[]): Promise<FleetBroker> {
  const presented = await probeBrokerCertificate(url, { timeoutMs: 30_000 });
  if (!fingerprintsEqual(presented.fingerprint, fingerprint)) throw new FingerprintMismatch(url, fingerprint, presented.fingerprint);
  return { url, ...(urls === undefined ? {} : { urls }), fingerprint, certPem: presented.certPem };
}

/** `count` nodes named `sim-00001`…, each with fresh keys. libsodium must be ready. */
export function fleetMembers(count: number, prefix = 'sim'): FleetMember[] {
  const width = Math.max(5, String(count).length);
  return Array.from({ length: count }, (_, index) => ({ name: `${prefix}-${String(index + 1).padStart(width, '0')}`, identity: generateNodeIdentity() }));
}

/**
 * Opens the member's own connection the way the host's does after its probe (pinnedAttempt):
 * TLS trusting the probed certificate alone and checking its fingerprint again (pinnedDial), the
 * member's own nkey, replies only under its own inbox prefix, no async stack traces. Reconnects
 * on its own, as the host's link does; on a cluster it starts on the server its name falls on
 * and goes round the others in order, as the host's serverRotation does.
 */
export function connectMember(member: FleetMember, broker: FleetBroker): Promise<NatsConnection> {
  const urls = broker.urls ?? [broker.url];
  const first = urls.indexOf(startingServer(member.name, urls));
  return connect({
    servers: [...urls.slice(first), ...urls.slice(0, first)],
    noRandomize: true,
    ignoreClusterUpdates: true,
    tls: pinnedDial(broker.certPem, broker.fingerprint).tls,
    authenticator: memberAuthenticator(member),
    inboxPrefix: nodeInboxPrefix(member.name),
    name: `nox-mesh-host ${member.name} (simulated)`,
    noAsyncTraces: true,
    timeout: 30_000,
    maxReconnectAttempts: -1,
  });
}

/**
 * The member's nkey login: the server's nonce signed with the member's Ed25519 key, as the
 * client's nkeyAuthenticator signs it (the same key, the same signature, base64url), by
 * libsodium instead of the client's pure-JavaScript Ed25519, which takes milliseconds a
 * signature: thousands of them are most of what bringing a simulated fleet up costs.
 */
export function memberAuthenticator(member: FleetMember): Authenticator {
  const { secretKey } = signingKeyPairOf(member.identity.secret_key, 'the member seed');
  return (nonce?: string) => ({
    nkey: member.identity.nkey_public,
    sig: nonce === undefined ? '' : encode(sodium().crypto_sign_detached(new TextEncoder().encode(nonce), secretKey)),
  });
}

/**
 * Runs `work` for every item with at most `width` at once, in order of start, and returns the
 * results in the items' order: how thousands of connections or consumers are opened without
 * thousands of handshakes racing on two cores.
 */
export async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, () => lane()));
  return results;
}
