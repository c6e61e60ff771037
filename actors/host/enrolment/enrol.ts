import { errors as natsErrors, type NatsConnection } from '@nats-io/transport-node';
import { canonicalJson } from '../../../schema/canonical';
import { EnrolReply, type EnrolRequest } from '../../../schema/enrolment';
import type { HostPins } from '../../../schema/host-state';
import type { EnrolmentToken } from '../../../schema/token';
import { connectPinnedAny } from '../../shared/bus/connect-pinned-any';
import { BrokerRefusedCredentials } from '../../shared/bus/bus-errors';
import { enrolmentInboxPrefix, enrolmentSubject, enrolmentUserName } from '../../shared/bus/subjects';
import { connectThroughReloads } from '../../shared/bus/through-reloads';
import { brokerPasswordFor } from '../../shared/crypto/token';
import { OperatorError } from '../../shared/operator-error';
import { runningVersion } from '../../shared/version';
import type { HostContext } from '../host-context';
import { collectInventory } from '../profile/detect-inventory';
import { detectProfile } from '../profile/detect-profile';
import { WireGuardKeyPath } from '../../../schema/profile';
import path from 'node:path';
import { EnrolmentUnanswered, EnrolReplyMalformed, StateDirUnfitForOverlay, TokenNotAccepted, enrolmentRefused } from './enrol-errors';
import { enrolledState } from './enrolled-state';
import { signEnrolRequest } from './sign-enrol-request';
import { enrolmentKeysFor, forgetEnrolmentKeys, type EnrolmentKeys } from './enrolment-keys';
import { WIREGUARD_KEY_FILE, writeWireGuardKey } from './wireguard-key';
import { utcTimestamp } from '../../shared/time/utc-timestamp';

/** How an enrolment is carried out. */
export interface EnrolOptions {
  /** How long connecting, and then waiting for the controller's answer, may each take. */
  timeoutMs: number;
  /** Hears the request as it is sent (tests look at what went up). */
  onRequest?(request: EnrolRequest): void;
}

/** What enrolment gave this machine; public halves only. */
export interface Enrolled {
  node: string;
  nkey_public: string;
  public_key: string;
  wireguard_public_key: string;
  broker_url: string;
  /** The node this machine was before, when it was one (its identity was revoked at issue). */
  replaced_node: string | null;
}

/**
 * Enrols this machine with a decoded token: makes its identity (Ed25519, which is also its
 * broker nkey) and a WireGuard key pair, describes the machine (profile and inventory), dials
 * the broker pinned by the token — nothing is sent before the broker's certificate matched —
 * as the token's one-time user, and asks the controller to enrol it. On success the identity
 * and the pins are stored (the host must be open: the store is locked) and the WireGuard
 * private key written; on any refusal nothing on the machine changed. The keys of an attempt
 * that may still finish (no answer, the controller unavailable, the broker away) are kept in
 * the state directory, so running the same command again presents the same keys.
 *
 * Throws FingerprintMismatch and the other broker errors as they are, TokenNotAccepted when the
 * broker refuses the one-time user, an EnrolmentRefused subclass for each refusal the controller
 * sends, EnrolmentUnanswered and EnrolReplyMalformed.
 */
export async function enrol(host: HostContext, token: EnrolmentToken, options: EnrolOptions): Promise<Enrolled> {
  const { stateDir } = host.settings;
  const { identity, wireguard } = await enrolmentKeysFor(stateDir, token.token_id);
  try {
    const enrolled = await enrolWith(host, token, { identity, wireguard }, options);
    await forgetEnrolmentKeys(stateDir);
    return enrolled;
  } catch (error) {
    // Kept only where asking again can still finish this enrolment with these keys.
    if (!(error instanceof OperatorError && error.retryable)) await forgetEnrolmentKeys(stateDir);
    throw error;
  }
}

async function enrolWith(host: HostContext, token: EnrolmentToken, keys: EnrolmentKeys, options: EnrolOptions): Promise<Enrolled> {
  const { identity, wireguard } = keys;
  const { root } = host.settings;
  const profile = { ...(await detectProfile({ root, runner: host.runner })), wireguard_key_path: wireguardKeyPath(host.settings.stateDir) };
  const { inventory } = await collectInventory({ root, runner: host.runner, profile });
  const request = signEnrolRequest({
    format: 'mesh-enrol-1',
    token_id: token.token_id,
    secret: token.secret,
    public_key: identity.public_key,
    nkey_public: identity.nkey_public,
    wireguard_public_key: wireguard.public_key,
    hostname: profile.hostname,
    profile,
    inventory,
    version_running: runningVersion(),
  }, identity.secret_key);

  const reply = await ask(token, request, options);
  if (!reply.ok) throw enrolmentRefused(reply, token.token_id);

  const pins: HostPins = {
    broker_url: token.broker_url,
    ...(token.broker_urls === undefined ? {} : { broker_urls: token.broker_urls }),
    broker_fingerprint: token.broker_fingerprint,
    controller_public_key: token.controller_public_key,
  };
  const before = host.state.current().identity;
  await writeWireGuardKey(host.settings.stateDir, wireguard.private_key);
  await host.state.update((state) => enrolledState(state, { node: reply.node, ...identity }, pins, utcTimestamp(host.now())));
  return {
    node: reply.node,
    nkey_public: identity.nkey_public,
    public_key: identity.public_key,
    wireguard_public_key: wireguard.public_key,
    broker_url: token.broker_url,
    replaced_node: before === null ? null : before.node,
  };
}

/**
 * Where the WireGuard private key is, as this machine's processes (wg-quick's PostUp, the sync
 * action) see it: the real state directory, so a host run with --state-dir or --root names its
 * own key, not the default directory's.
 */
function wireguardKeyPath(stateDir: string): string {
  const keyPath = path.join(path.resolve(stateDir), WIREGUARD_KEY_FILE);
  const checked = WireGuardKeyPath.safeParse(keyPath);
  if (!checked.success) throw new StateDirUnfitForOverlay(keyPath, checked.error.issues.map((issue) => issue.message).join('; '));
  return keyPath;
}

async function ask(token: EnrolmentToken, request: EnrolRequest, options: EnrolOptions): Promise<EnrolReply> {
  let connection: NatsConnection;
  try {
    // A cluster token names every server: the first that answers takes the request.
    const connectOnce = () => connectPinnedAny(token.broker_urls ?? [token.broker_url], token.broker_fingerprint, {
      user: enrolmentUserName(token.token_id),
      pass: brokerPasswordFor(token.secret, token.token_id),
      inboxPrefix: enrolmentInboxPrefix(token.token_id),
      name: 'nox-mesh-host enrol',
      reconnect: false,
      timeout: options.timeoutMs,
    });
    // A refusal may be the broker reloading its user list, which the controller makes it do at
    // every token and enrolment (on each server of a cluster): asked again a few times before
    // the token is called used.
    connection = await connectThroughReloads(connectOnce);
  } catch (error) {
    if (error instanceof BrokerRefusedCredentials) throw new TokenNotAccepted(token.token_id, error);
    throw error;
  }
  try {
    options.onRequest?.(request);
    let answer: Uint8Array;
    try {
      answer = (await connection.request(enrolmentSubject(token.token_id), canonicalJson(request), { timeout: options.timeoutMs })).data;
    } catch (error) {
      throw unanswered(error, token.token_id, options.timeoutMs);
    }
    return readReply(answer);
  } finally {
    await connection.close();
  }
}

function readReply(data: Uint8Array): EnrolReply {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(data));
  } catch (error) {
    throw new EnrolReplyMalformed('it is not JSON', error);
  }
  const parsed = EnrolReply.safeParse(json);
  if (!parsed.success) throw new EnrolReplyMalformed(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'reply'}: ${issue.message}`).join('; '), parsed.error);
  return parsed.data;
}

function unanswered(error: unknown, tokenId: string, timeoutMs: number): unknown {
  const cause = (error as { cause?: unknown }).cause;
  if (error instanceof natsErrors.NoRespondersError || cause instanceof natsErrors.NoRespondersError) {
    return new EnrolmentUnanswered(tokenId, 'nothing is listening for enrolments at the broker', error);
  }
  if (error instanceof natsErrors.TimeoutError || cause instanceof natsErrors.TimeoutError) {
    return new EnrolmentUnanswered(tokenId, `no answer within ${Math.round(timeoutMs / 1000)} s`, error);
  }
  return error;
}
