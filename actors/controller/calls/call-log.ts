import type { KV, KvEntry } from '@nats-io/kv';
import { ControlCall, type CallState } from '../../../schema/control-call';
import type { CallHandle, CallOutcome, CallRecorder } from '../control/call-recorder';
import type { LeaseIdentity } from '../lease/kv-lease';
import { boundAnswer } from './bound-answer';
import { newCallId } from './call-id';
import type { ControllerLog } from '../logs/log-fields';

/** What a CallLog needs. */
export interface CallLogOptions {
  kv: KV;
  /** This controller, as each call names the one that answered it. */
  identity: LeaseIdentity;
  /** The epoch acted under now, or null (a standby has none). */
  epoch(): number | null;
  now(): Date;
  log: ControllerLog;
}

/**
 * The calls of acting verbs, kept in the calls bucket (one key per call id): begun `running`
 * when the verb is called, ended with the answer or refusal its caller was given. Read back by
 * id or newest first, by any controller and across restarts.
 *
 * Writing a record never fails a call: a call whose record cannot be written is answered all
 * the same and the failure logged, since the person asked for the act, not for the record.
 */
export class CallLog implements CallRecorder {
  readonly #options: CallLogOptions;

  constructor(options: CallLogOptions) {
    this.#options = options;
  }

  async begin(verb: string, args: readonly string[], caller: string): Promise<CallHandle> {
    const { kv, identity, now, log } = this.#options;
    const startedAt = now();
    const call: ControlCall = {
      id: newCallId(startedAt),
      verb,
      args: [...args].sort(),
      caller,
      controller: identity.controller,
      instance: identity.instance,
      epoch: this.#options.epoch(),
      state: 'running',
      started_at: startedAt.toISOString(),
      ended_at: null,
      took_ms: null,
      answer: null,
      error: null,
    };
    await kv.create(call.id, JSON.stringify(call)).catch((error: unknown) => log(`calls: call ${call.id} (${verb}) could not be kept: ${describe(error)}`, { level: 'error', call: call.id, verb }));
    return {
      id: call.id,
      end: async (outcome: CallOutcome) => {
        const endedAt = now();
        const ended: ControlCall = {
          ...call,
          state: outcome.state,
          ended_at: endedAt.toISOString(),
          took_ms: Math.max(0, endedAt.getTime() - startedAt.getTime()),
          answer: outcome.state === 'answered' ? boundAnswer(outcome.answer) : null,
          error: outcome.state === 'answered' ? null : outcome.error,
        };
        await kv.put(call.id, JSON.stringify(ended)).catch((error: unknown) => log(`calls: how call ${call.id} (${verb}) ended could not be kept: ${describe(error)}`, { level: 'error', call: call.id, verb }));
      },
    };
  }

  /** The call with this id, or null when none is kept (never made, or older than the limits). */
  async get(id: string): Promise<ControlCall | null> {
    return callOf(await this.#options.kv.get(id));
  }

  /** The newest `limit` calls, newest first. */
  async recent(limit: number): Promise<ControlCall[]> {
    const keys: string[] = [];
    for await (const key of await this.#options.kv.keys()) keys.push(key);
    keys.sort().reverse();
    const calls = await Promise.all(keys.slice(0, limit).map((key) => this.get(key)));
    return calls.filter((call): call is ControlCall => call !== null);
  }

  /**
   * Marks `abandoned` every call still `running` that another controller process began: one
   * that stopped (or lost its lease) before answering it, since a controller answers calls only
   * while it holds the lease and this one holds it now. Each is changed by compare-and-set, so a
   * call that ended meanwhile keeps its end. Returns the ids marked.
   */
  async abandonStopped(): Promise<string[]> {
    const { kv, identity, now } = this.#options;
    const marked: string[] = [];
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    for (const key of keys) {
      const entry = await kv.get(key);
      const call = callOf(entry);
      if (entry === null || call === null || call.state !== 'running' || call.instance === identity.instance) continue;
      const endedAt = now();
      const abandoned: ControlCall = {
        ...call,
        state: 'abandoned' satisfies CallState,
        ended_at: endedAt.toISOString(),
        took_ms: Math.max(0, endedAt.getTime() - Date.parse(call.started_at)),
        error: {
          condition: 'CallAbandoned',
          what: `the controller answering it (${call.controller}) stopped before it ended`,
          next: 'see whether it was done (mesh-control status, mesh-control nodes) and call the verb again if not',
          retryable: true,
        },
      };
      try {
        await kv.update(key, JSON.stringify(abandoned), entry.revision);
        marked.push(key);
      } catch {
        // It ended (or was marked) meanwhile: its record stands.
      }
    }
    return marked;
  }
}

function callOf(entry: KvEntry | null): ControlCall | null {
  if (entry === null || entry.operation !== 'PUT') return null;
  try {
    const parsed = ControlCall.safeParse(entry.json());
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
