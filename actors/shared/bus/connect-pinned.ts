import { AuthorizationError, connect, TimeoutError, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { fingerprintsEqual, normaliseFingerprint } from '../crypto';
import { parseBrokerAddress } from './broker-address';
import {
  BrokerCertificateOutOfDate,
  BrokerRefusedCredentials,
  BrokerUnreachable,
  FingerprintMismatch,
} from './bus-errors';
import { PIN_REFUSED_CODE, pinnedDial } from './pinned-dial';
import { describeSocketError } from './socket-error';
import { probeBrokerCertificate, type BrokerCertificate } from './tls-probe';

/**
 * NATS client options for a pinned connection: everything but where to dial and how to do
 * TLS, which `connectPinned` decides. Credentials (`authenticator`, `user`/`pass`), the
 * `inboxPrefix`, reconnection and ping settings pass through unchanged.
 */
export type PinnedNatsOptions = Omit<NodeConnectionOptions, 'servers' | 'port' | 'tls'>;

/** Settings of the pinning itself. */
export interface ConnectPinnedOptions {
  /** How long the certificate probe may take. Default: the NATS `timeout`, else 5000 ms. */
  probeTimeoutMs?: number;
  /** Calls off the probe (the NATS handshake that follows is bounded by `timeout`). */
  signal?: AbortSignal;
  /**
   * Certificates (PEM) the client's own reconnections may also meet, read at each one: for a
   * long-lived connection whose owner keeps the broker's next certificate (see pinnedDial).
   */
  alsoTrusted?: () => readonly string[];
  /**
   * The other servers of a cluster, for the client's own reconnections (tried in order after
   * `url`). Each is held to the same pins: every server of a mesh's cluster presents the one
   * certificate the mesh pins, and a server presenting another is refused at the handshake.
   */
  alsoServers?: readonly string[];
}

const DEFAULT_PROBE_TIMEOUT_MS = 5000;

/** BrokerUnreachable's reason when the TLS connection opened but the NATS handshake never ended. */
export const HANDSHAKE_TIMED_OUT = 'the NATS handshake timed out';

/**
 * TLS verification failures that mean "this is not the pinned certificate" once the pinned
 * certificate is the only trust anchor: the broker changed certificate after the probe.
 */
const NOT_PINNED_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  PIN_REFUSED_CODE,
]);
const OUT_OF_DATE_CODES = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/**
 * Opens the NATS connection to a broker whose certificate is pinned by fingerprint, sending
 * nothing to it (no CONNECT, so no credentials) until the certificate is known to be the
 * pinned one.
 *
 * First a probe reads the certificate with nothing but a TLS ClientHello and its fingerprint is
 * compared with the pin; then the real connection trusts that certificate alone and checks
 * its fingerprint again, so a certificate swapped between the two is refused as well, and so
 * are the client's own reconnections, which reuse the same TLS options. The host name is not
 * checked: the pin replaces it.
 *
 * `pinnedFingerprints` is one fingerprint, or two while the broker's certificate is being
 * rotated (the current and the next, as a signed declaration gave them): either passes.
 *
 * Fails with FingerprintMismatch, BrokerUnreachable (retryable), BrokerNotNats,
 * BrokerWithoutTls, BrokerCertificateOutOfDate or BrokerRefusedCredentials; other NATS
 * client errors pass through.
 */
export async function connectPinned(
  url: string,
  pinnedFingerprints: string | readonly string[],
  natsOptions: PinnedNatsOptions = {},
  options: ConnectPinnedOptions = {},
): Promise<NatsConnection> {
  const pins = (typeof pinnedFingerprints === 'string' ? [pinnedFingerprints] : [...pinnedFingerprints]).map((given) => {
    const pin = normaliseFingerprint(given);
    if (pin === undefined) throw new TypeError(`a pinned fingerprint must be SHA-256 hex, got ${JSON.stringify(given)}`);
    return pin;
  });
  if (pins.length === 0) throw new TypeError('connectPinned needs at least one pinned fingerprint');
  parseBrokerAddress(url);
  const probeOptions = { timeoutMs: options.probeTimeoutMs ?? natsOptions.timeout ?? DEFAULT_PROBE_TIMEOUT_MS, signal: options.signal };
  const presented = await probeBrokerCertificate(url, probeOptions);
  const pinned = pins.find((pin) => fingerprintsEqual(presented.fingerprint, pin));
  if (pinned === undefined) throw new FingerprintMismatch(url, pins, presented.fingerprint);

  // Only the certificate the probe found pinned is trusted for this connection.
  const dial = pinnedDial(presented.certPem, pinned, options.alsoTrusted);
  try {
    const others = (options.alsoServers ?? []).filter((server) => server !== url);
    for (const server of others) parseBrokerAddress(server);
    const servers = others.length === 0 ? { servers: url } : { servers: [url, ...others], noRandomize: true, ignoreClusterUpdates: true };
    return await connect({ ...natsOptions, ...servers, tls: dial.tls });
  } catch (error) {
    const codes = errorCodes(error);
    if (codes.some((code) => NOT_PINNED_CODES.has(code))) {
      throw new FingerprintMismatch(url, pins, dial.refusedFingerprint() ?? (await fingerprintNow(url, pinned, probeOptions)), error);
    }
    if (codes.some((code) => OUT_OF_DATE_CODES.has(code))) throw new BrokerCertificateOutOfDate(url, presented.validFrom, presented.validTo, error);
    if (error instanceof AuthorizationError) throw new BrokerRefusedCredentials(url, error);
    if (error instanceof TimeoutError) throw new BrokerUnreachable(url, HANDSHAKE_TIMED_OUT, error);
    const socketCode = codes.find((code) => /^E[A-Z_]+$/.test(code));
    if (socketCode !== undefined) throw new BrokerUnreachable(url, describeSocketError({ code: socketCode }), error);
    throw error;
  }
}

/**
 * What the broker presents now, for the message when the real connection refused a
 * certificate the probe did not see; undefined when it cannot be read or has flipped back to
 * the pinned one.
 */
async function fingerprintNow(url: string, pinned: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<string | undefined> {
  let now: BrokerCertificate;
  try {
    now = await probeBrokerCertificate(url, options);
  } catch {
    return undefined;
  }
  return fingerprintsEqual(now.fingerprint, pinned) ? undefined : now.fingerprint;
}

/** The `code`s along an error's cause chain (the NATS client wraps socket errors). */
function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}
