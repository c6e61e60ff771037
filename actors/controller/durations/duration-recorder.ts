import type { Sql } from '../store/sql-store';
import { binOf } from './duration-bins';

/** What is measured: see migrations/0055_durations.sql. */
export const DURATION_KINDS = ['apply', 'heartbeat-gap', 'plan-tier'] as const;
/** One of {@link DURATION_KINDS}. */
export type DurationKind = (typeof DURATION_KINDS)[number];

/** Measurements are counted in windows of five minutes: the finest `--since` can look. */
export const DURATION_WINDOW_MS = 5 * 60_000;

/** Windows older than this are pruned. */
export const DURATIONS_KEPT_MS = 30 * 86_400_000;

interface Pending {
  kind: DurationKind;
  windowStart: number;
  bin: number;
  count: number;
}

/**
 * Durations as the controller hears them end, counted in memory by kind, five-minute window and
 * bin, and written to `duration_counts` by `flush` (every few seconds by the durations part,
 * and before each summary). Memory and each flush are bounded by kinds × windows × bins, not by
 * how many were heard: ten thousand heartbeats a minute add to a few dozen counts. What was
 * heard since the last flush is lost if the process dies; a flush that fails keeps its counts
 * for the next.
 *
 * Heartbeat gaps are measured between two heartbeats of a node this process heard, so the
 * first one after a start measures nothing (the gap before it would include the controller's
 * own absence).
 */
export class DurationRecorder {
  readonly #sql: Sql;
  #pending = new Map<string, Pending>();
  readonly #lastBeat = new Map<string, number>();
  #flushing: Promise<void> = Promise.resolve();

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  /** Counts one duration of `kind`, `ms` long, that ended when heard at `at`. A negative one (a clock stepped back) is not counted. */
  heard(kind: DurationKind, ms: number, at: Date): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.#add({ kind, windowStart: windowOf(at.getTime()), bin: binOf(ms), count: 1 });
  }

  /** A heartbeat of `node` heard at `at`: counts the gap since its last one heard here. */
  heartbeat(node: string, at: Date): void {
    const previous = this.#lastBeat.get(node);
    this.#lastBeat.set(node, Math.max(previous ?? 0, at.getTime()));
    if (previous !== undefined) this.heard('heartbeat-gap', at.getTime() - previous, at);
  }

  /** How many (kind, window, bin) counts wait to be written. */
  pendingCounts(): number {
    return this.#pending.size;
  }

  /** Writes what was counted since the last flush, one statement; flushes run one at a time. */
  flush(): Promise<void> {
    const run = this.#flushing.then(() => this.#write());
    this.#flushing = run.catch(() => undefined);
    return run;
  }

  /** Deletes the windows that ended before `now` less DURATIONS_KEPT_MS; how many counts went. */
  async prune(now: Date): Promise<number> {
    const rows = await this.#sql.query<{ n: string | number }>(
      'WITH gone AS (DELETE FROM duration_counts WHERE window_start < $1 RETURNING 1) SELECT count(*) AS n FROM gone',
      [new Date(windowOf(now.getTime() - DURATIONS_KEPT_MS))],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const taken = this.#pending;
    this.#pending = new Map();
    const rows = [...taken.values()].map((entry) => ({ kind: entry.kind, window_start: new Date(entry.windowStart).toISOString(), bin: entry.bin, count: entry.count }));
    try {
      await this.#sql.query(
        `INSERT INTO duration_counts (kind, window_start, bin, count)
         SELECT kind, window_start, bin, count FROM jsonb_to_recordset($1::jsonb) AS r(kind text, window_start timestamptz, bin integer, count bigint)
         ON CONFLICT (kind, window_start, bin) DO UPDATE SET count = duration_counts.count + EXCLUDED.count`,
        [JSON.stringify(rows)],
      );
    } catch (error) {
      for (const entry of taken.values()) this.#add(entry);
      throw error;
    }
  }

  #add(entry: Pending): void {
    const key = `${entry.kind}|${entry.windowStart}|${entry.bin}`;
    const pending = this.#pending.get(key);
    if (pending === undefined) this.#pending.set(key, { ...entry });
    else pending.count += entry.count;
  }
}

/** The start of the five-minute window `ms` falls in. */
export function windowOf(ms: number): number {
  return Math.floor(ms / DURATION_WINDOW_MS) * DURATION_WINDOW_MS;
}

const RECORDERS = new WeakMap<Sql, DurationRecorder>();

/**
 * The recorder of a store: one per open store, so the report receiver, the heartbeat tracker
 * and the plan runners all count into the one the durations part flushes, without each being
 * handed it.
 */
export function durationsOf(sql: Sql): DurationRecorder {
  let recorder = RECORDERS.get(sql);
  if (recorder === undefined) {
    recorder = new DurationRecorder(sql);
    RECORDERS.set(sql, recorder);
  }
  return recorder;
}
