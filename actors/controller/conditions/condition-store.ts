import { JetStreamApiError } from '@nats-io/jetstream';
import type { KV, KvEntry } from '@nats-io/kv';
import { Condition, ConditionEvent, type ConditionEventName, type ConditionSeverity } from '../../../schema/condition';
import type { ConditionOutbox } from './condition-outbox';
import { ConditionContended, ConditionNotFound, ConditionWrittenUnderLaterEpoch } from './condition-errors';
import type { OnSilenceMade } from './silence-made';
import type { ControllerLog } from '../logs/log-fields';

/** Seed 003: a clearing reopened within ten minutes is the same condition, its count up, its silence kept. */
export const REOPEN_WITHIN_MS = 10 * 60_000;

/** The longest a silence may run: a week. */
export const SILENCE_MAX_MS = 7 * 24 * 60 * 60_000;

/** The broker's answer to a compare-and-set at a revision that is not the key's: "wrong last sequence". */
const WRONG_LAST_SEQUENCE = 10071;

/** How many compare-and-set writes are tried before giving up on a key that keeps changing. */
const CAS_TRIES = 8;

/** What the watchdog saw: one condition that holds now. */
export interface Finding {
  /** `<kind>.<subject>`. */
  id: string;
  kind: string;
  signal: string;
  subject: string;
  severity: ConditionSeverity;
  /** Stable while nothing changes (no running clock in it), so an unchanged finding writes nothing. */
  detail: string;
  show: string;
}

/** The lease as the condition store sees it: writes only while acting, under its epoch. */
export interface ConditionFence {
  /** Throws NotActing unless this controller may act; `what` completes "it did not …". */
  assertActing(what: string): void;
  /** The epoch acted under. */
  epoch(): number;
}

/** What a ConditionStore needs. */
export interface ConditionStoreOptions {
  /** The conditions bucket. */
  kv: KV;
  outbox: ConditionOutbox;
  fence: ConditionFence;
  log: ControllerLog;
  /** Told when any condition changed (status composes again). */
  onChange?: (what: string) => void;
  /** The seam where a silence is handed on once written (see SilenceMade). */
  onSilenceMade?: OnSilenceMade;
}

type Decision = { next: Condition; event: ConditionEventName; change: string; why: string | null } | { remove: true } | null;

/**
 * The condition store over the conditions bucket: one key per condition, every write a
 * compare-and-set at the revision read, tried again over a fresh read when the key moved, so a
 * person's silence and the watchdog's observation never lose each other's word. Writes only
 * while this controller acts, never over a condition written under a later epoch. Each
 * transition goes to the outbox (history, then event).
 */
export class ConditionStore {
  readonly #options: ConditionStoreOptions;

  constructor(options: ConditionStoreOptions) {
    this.#options = options;
  }

  /** Every condition kept: open ones and those cleared within ten minutes. */
  async all(): Promise<Condition[]> {
    const keys: string[] = [];
    for await (const key of await this.#options.kv.keys()) keys.push(key);
    const read = await Promise.all(keys.map(async (key) => conditionOf(await this.#options.kv.get(key))));
    return read.filter((condition): condition is Condition => condition !== null);
  }

  /** The open conditions, urgent first, then the unsilenced, then the oldest. */
  async open(now: Date): Promise<Condition[]> {
    return sortConditions((await this.all()).filter((condition) => condition.state === 'open'), now);
  }

  /** The condition with this id, open or cleared within ten minutes; null when none is kept. */
  async get(id: string): Promise<Condition | null> {
    return conditionOf(await this.#options.kv.get(id));
  }

  /**
   * Raises a finding: a new condition; the same one again when it was cleared within ten
   * minutes (its count up, its silence kept); a change when what it says changed. Returns the
   * event written, or null when nothing changed.
   */
  raise(finding: Finding, now: Date): Promise<ConditionEventName | null> {
    return this.#change(finding.id, `raise ${finding.id}`, (current, epoch) => {
      const at = now.toISOString();
      if (current !== null && current.state === 'open') {
        if (current.detail === finding.detail && current.severity === finding.severity && current.show === finding.show) return null;
        const change = current.severity === finding.severity ? `detail: ${finding.detail}` : `severity ${current.severity} → ${finding.severity}`;
        return { next: { ...current, severity: finding.severity, detail: finding.detail, show: finding.show, changed_at: at, epoch }, event: 'condition-changed', change, why: null };
      }
      const reopened = current !== null && current.cleared_at !== null && now.getTime() - Date.parse(current.cleared_at) <= REOPEN_WITHIN_MS;
      const base = { ...finding, state: 'open' as const, changed_at: at, cleared_at: null, epoch };
      if (reopened) {
        return {
          next: { ...base, raised_at: current.raised_at, count: current.count + 1, silence: current.silence },
          event: 'condition-raised',
          change: `raised again within ten minutes of its clearing (count ${current.count + 1})`,
          why: null,
        };
      }
      return { next: { ...base, raised_at: at, count: 1, silence: null }, event: 'condition-raised', change: 'raised', why: null };
    });
  }

  /** Clears an open condition that no longer holds; its key stays ten minutes so a reopening is the same condition. */
  clear(id: string, now: Date, change: string): Promise<ConditionEventName | null> {
    return this.#change(id, `clear ${id}`, (current, epoch) => {
      if (current === null || current.state !== 'open') return null;
      const at = now.toISOString();
      return { next: { ...current, state: 'cleared', changed_at: at, cleared_at: at, epoch }, event: 'condition-cleared', change, why: null };
    });
  }

  /**
   * Silences a condition (open, or cleared within ten minutes) until `until`, saying who and
   * why; a later silence replaces an earlier one. Throws ConditionNotFound for any other id.
   */
  async silence(id: string, silence: { by: string; why: string; until: Date }, now: Date): Promise<Condition> {
    let previous: Condition['silence'] = null;
    let written: Condition | undefined;
    await this.#change(id, `silence ${id}`, (current, epoch) => {
      if (current === null) throw new ConditionNotFound(id);
      previous = current.silence !== null && Date.parse(current.silence.until) > now.getTime() ? current.silence : null;
      const made = { by: silence.by, why: silence.why, at: now.toISOString(), until: silence.until.toISOString() };
      written = { ...current, silence: made, changed_at: made.at, epoch };
      return { next: written, event: 'condition-changed', change: `silenced by ${made.by} until ${made.until}`, why: made.why };
    });
    if (written === undefined || written.silence === null) throw new ConditionNotFound(id);
    const made = { condition: written, silence: written.silence, previous };
    await Promise.resolve(this.#options.onSilenceMade?.(made)).catch((error: unknown) => this.#options.log(`conditions: the silence of ${id} is kept in the condition, but could not be handed on: ${describe(error)}`, { level: 'error', condition: id }));
    return written;
  }

  /**
   * Removes the keys of conditions cleared more than ten minutes ago: past that, a raising is a
   * new condition. `read` is a listing just made (all()), to spare reading every key again; each
   * removal still checks the key afresh.
   */
  async sweep(now: Date, read?: readonly Condition[]): Promise<string[]> {
    const removed: string[] = [];
    for (const condition of read ?? (await this.all())) {
      if (condition.state !== 'cleared' || condition.cleared_at === null || now.getTime() - Date.parse(condition.cleared_at) <= REOPEN_WITHIN_MS) continue;
      await this.#change(condition.id, `forget ${condition.id}`, (current) =>
        current !== null && current.state === 'cleared' && current.cleared_at !== null && now.getTime() - Date.parse(current.cleared_at) > REOPEN_WITHIN_MS ? { remove: true } : null,
      ).then(() => removed.push(condition.id));
    }
    return removed;
  }

  async #change(id: string, what: string, decide: (current: Condition | null, epoch: number) => Decision): Promise<ConditionEventName | null> {
    const { kv, fence } = this.#options;
    for (let tries = 1; tries <= CAS_TRIES; tries += 1) {
      fence.assertActing(`${what} (conditions are written only under the lease)`);
      const epoch = fence.epoch();
      const entry = await kv.get(id);
      const current = conditionOf(entry);
      if (current !== null && current.epoch > epoch) throw new ConditionWrittenUnderLaterEpoch(id, current.epoch, epoch);
      const decision = decide(current, epoch);
      if (decision === null) return null;
      const revision = entry === null ? 0 : entry.revision;
      try {
        if ('remove' in decision) {
          await kv.delete(id, { previousSeq: revision });
          return null;
        }
        const value = JSON.stringify(Condition.parse(decision.next));
        if (entry === null) await kv.create(id, value);
        else await kv.update(id, value, revision);
      } catch (error) {
        if (isWrongLastSequence(error) || (entry === null && isKeyExists(error))) continue;
        throw error;
      }
      const event: ConditionEvent = { ...decision.next, event: decision.event, at: decision.next.changed_at, change: decision.change, why: decision.why };
      this.#options.onChange?.(`${decision.event} ${id}`);
      await this.#options.outbox.offer(historyKey(id, new Date(event.at)), ConditionEvent.parse(event));
      return decision.event;
    }
    throw new ConditionContended(id, CAS_TRIES);
  }
}

/** Open conditions in the order a person should read them: urgent first, silenced after the unsilenced, then oldest first. */
export function sortConditions(conditions: readonly Condition[], now: Date): Condition[] {
  const rank = (condition: Condition): number => (condition.severity === 'urgent' ? 0 : 2) + (isSilenced(condition, now) ? 1 : 0);
  return [...conditions].sort((a, b) => rank(a) - rank(b) || a.raised_at.localeCompare(b.raised_at) || a.id.localeCompare(b.id));
}

/** True while a person's silence of the condition runs. */
export function isSilenced(condition: Condition, now: Date): boolean {
  return condition.silence !== null && Date.parse(condition.silence.until) > now.getTime();
}

/**
 * The history key of a transition: the condition's id, then when (base-36 milliseconds, so keys
 * sort by time) and a random tail, so two transitions in one millisecond are both kept.
 */
export function historyKey(id: string, at: Date): string {
  return `${id}.${at.getTime().toString(36).padStart(9, '0')}-${Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, '0')}`;
}

function conditionOf(entry: KvEntry | null): Condition | null {
  if (entry === null || entry.operation !== 'PUT') return null;
  try {
    const parsed = Condition.safeParse(entry.json());
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function isWrongLastSequence(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE;
}

function isKeyExists(error: unknown): boolean {
  return error instanceof Error && /wrong last sequence|key exists/i.test(error.message);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
