import { nkeyAuthenticator, NoRespondersError, RequestError, TimeoutError, type NatsConnection } from '@nats-io/transport-node';
import { ControlReply, type ControlRequest } from '../../../schema/control';
import { BrokerUnreachable, connectPinnedAny } from '../../shared/bus';

import { OPERATOR_INBOX_PREFIX, controlSubject } from '../../shared/bus/subjects';
import { connectThroughReloads } from '../../shared/bus/through-reloads';
import { brokerUrlsOf } from '../config/broker-urls';
import { loadControllerConfig } from '../config/load-controller-config';
import { meshDirLayout } from '../config/mesh-dir-layout';
import { readNkeySeedFile } from '../config/nkey-seed-file';
import {
  ControlBrokerUnreachable,
  ControlReplyMalformed,
  ControllerDidNotAnswer,
  ControllerNotRunning,
  ControllerRefused,
  ControlRequestTooLarge,
} from './control-errors';
import type { VerbAnswer } from './verb-registry';

/** How long the CLI waits for the controller unless told otherwise: a token issue reloads the broker twice. */
export const DEFAULT_CALL_TIMEOUT_MS = 15_000;

/** Options of {@link callController}. */
export interface CallControllerOptions {
  /** How long to wait for the answer (the connection itself takes at most 5 s of it). */
  timeoutMs?: number;
}

/**
 * Asks the serving controller of the mesh in `dir` to run `verb` with `args`, the way every
 * acting CLI verb does: reads mesh.json, connects to the broker as the operator's nkey user
 * (in its own account, inbox prefix `_INBOX_operator`, the only one it may read) with the broker's certificate
 * pinned by its fingerprint, sends one ControlRequest and waits for the ControlReply.
 *
 * The controller's refusal comes back as a ControllerRefused carrying its condition; no answer
 * in time is ControllerDidNotAnswer, which names `mesh-control serve --dir DIR` (the request
 * crosses from the operator's account, so nats-server 2.9 cannot say at once that nobody
 * listens; ControllerNotRunning is for a server that does); a broker that cannot be reached
 * is ControlBrokerUnreachable.
 */
export async function callController(dir: string, verb: string, args: Record<string, unknown>, options: CallControllerOptions = {}): Promise<VerbAnswer> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const line = await openControlLine(dir, { timeoutMs });
  try {
    return await line.call(verb, args, { timeoutMs });
  } finally {
    await line.close();
  }
}

/** One operator connection to the broker that asks the controller many times (`mesh-control dashboard`). */
export interface ControlLine {
  /** Asks the controller to run `verb`, as {@link callController} does, on this connection. */
  call(verb: string, args: Record<string, unknown>, options?: CallControllerOptions): Promise<VerbAnswer>;
  /** Closes the connection; calls after it fail. */
  close(): Promise<void>;
}

/**
 * Connects to the broker of the mesh in `dir` as the operator, as {@link callController} does,
 * and keeps the connection for many calls, so a caller that asks every half second does not
 * make a TLS connection each time. `reconnect` lets the connection come back after a broker
 * restart.
 */
export async function openControlLine(dir: string, options: CallControllerOptions & { reconnect?: boolean } = {}): Promise<ControlLine> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const root = meshDirLayout(dir).dir;
  const config = await loadControllerConfig(root);
  const operator = await readNkeySeedFile(config.operator.nkey_seed_file);
  let nc: NatsConnection;
  try {
    const connectOnce = () => connectPinnedAny(brokerUrlsOf(config), config.broker.fingerprint, {
      authenticator: nkeyAuthenticator(operator.seed),
      inboxPrefix: OPERATOR_INBOX_PREFIX,
      name: 'mesh-control (operator)',
      reconnect: options.reconnect ?? false,
      // A line kept open for a page keeps coming back however long the broker is away.
      ...(options.reconnect === true ? { maxReconnectAttempts: -1 } : {}),
      timeout: Math.min(timeoutMs, 5000),
    });
    // A refusal may be the broker reloading its user list, as it does at every change on
    // every server of a cluster: asked again a few times before it is believed.
    nc = await connectThroughReloads(connectOnce);
  } catch (error) {
    if (error instanceof BrokerUnreachable) throw new ControlBrokerUnreachable(error.url, error.reason, root, error);
    throw error;
  }
  return {
    call: (verb, args, callOptions = {}) => askController(nc, root, config.broker.url, verb, args, callOptions.timeoutMs ?? timeoutMs),
    close: async () => {
      await nc.close().catch(() => undefined);
    },
  };
}

async function askController(nc: NatsConnection, root: string, brokerUrl: string, verb: string, args: Record<string, unknown>, timeoutMs: number): Promise<VerbAnswer> {
  const request = new TextEncoder().encode(JSON.stringify({ format: 'mesh-control-1', verb, args } satisfies ControlRequest));
  const maxPayload = nc.info?.max_payload;
  if (maxPayload !== undefined && request.byteLength > maxPayload) throw new ControlRequestTooLarge(verb, request.byteLength, maxPayload);
  let text: string;
  try {
    text = (await nc.request(controlSubject(verb), request, { timeout: timeoutMs })).string();
  } catch (error) {
    if (isNoResponders(error)) throw new ControllerNotRunning(brokerUrl, root);
    if (isTimeout(error)) throw new ControllerDidNotAnswer(verb, timeoutMs, root);
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ControlReplyMalformed(verb, 'it is not JSON');
  }
  const reply = ControlReply.safeParse(json);
  if (!reply.success) throw new ControlReplyMalformed(verb, reply.error.issues[0]?.message ?? 'it does not match the control reply');
  if (!reply.data.ok) throw new ControllerRefused(reply.data.error);
  return { result: reply.data.result, text: reply.data.text };
}

function isNoResponders(error: unknown): boolean {
  return error instanceof NoRespondersError || (error instanceof RequestError && error.isNoResponders()) || (error as { cause?: unknown })?.cause instanceof NoRespondersError;
}

function isTimeout(error: unknown): boolean {
  return error instanceof TimeoutError || (error as { cause?: unknown })?.cause instanceof TimeoutError;
}
