import { JetStreamApiCodes, jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { consumerExists, isApiError } from '../declarations/declaration-stream';
import type { Sql } from '../store/sql-store';
import { BusAdvisoryWatch, type AdvisoryObservations } from './bus-advisories';
import type { DoctorBoard } from '../doctor/doctor-board';
import { formatSpan } from '../nodes/format-span';
import type { ControllerPart } from '../serve/controller-parts';
import type { ConditionOutbox } from './condition-outbox';
import type { ConditionStore } from './condition-store';
import { PROBE_FAILED, SIGNALS, type SignalRow } from './signals-table';
import { storeWatchdogView } from './store-watchdog-view';
import { watchOnce } from './watch-once';
import { WATCHDOG_SETTINGS, type WatchdogSettings } from './watchdog-settings';

/** Seed 003: one watchdog loop over the signals table every 30 s. */
export const WATCHDOG_EVERY_MS = 30_000;

/** Options of {@link watchdogPart}. */
export interface WatchdogPartOptions {
  store: ConditionStore;
  outbox: ConditionOutbox;
  /** The calls bucket (S7). */
  calls: KV;
  doctor: DoctorBoard;
  /** How often it looks (WATCHDOG_EVERY_MS); short in tests. */
  everyMs?: number;
  /** The bounds (WATCHDOG_SETTINGS, with the heartbeat periods serve was given). */
  settings?: WatchdogSettings;
  /** The rows (SIGNALS). */
  rows?: readonly SignalRow[];
}

/**
 * The watchdog in `mesh-control serve`: one look over the signals table (watchOnce) at start and
 * every `everyMs` after, only while this controller acts; first offering again whatever
 * transitions the bus did not take. One look at a time; one due while another runs is skipped;
 * one that failed is logged and made again next time. Says each look that raised or cleared.
 */
export function watchdogPart(options: WatchdogPartOptions): ControllerPart {
  const everyMs = options.everyMs ?? WATCHDOG_EVERY_MS;
  const settings = options.settings ?? WATCHDOG_SETTINGS;
  return {
    name: 'watchdog',
    start: async (ctx) => {
      const advisories = new BusAdvisoryWatch(ctx.nc, advisoryObservations(ctx.store, onceManager(ctx.nc)), ctx.log, ctx.now);
      const view = storeWatchdogView({ store: ctx.store, calls: options.calls, doctorLast: () => options.doctor.last(), advisories, since: ctx.now() });
      let running: Promise<void> | undefined;
      let takenUp = false;
      const look = (): void => {
        if (running !== undefined || ctx.lease?.isActing() === false) return;
        running = (async () => {
          await options.outbox.flush();
          // Before the first look: the broker's advisories an earlier controller heard and left open.
          if (!takenUp) {
            advisories.takeUp(await options.store.all());
            takenUp = true;
          }
          const outcome = await watchOnce(options.rows ?? SIGNALS, view, options.store, settings, ctx.now());
          const said = [
            ...outcome.raised.map((id) => `raised ${id}`),
            ...outcome.changed.map((id) => `changed ${id}`),
            ...outcome.cleared.map((id) => `cleared ${id}`),
          ];
          if (said.length > 0) ctx.log(`watchdog: ${said.join('; ')}`, { level: outcome.raised.length > 0 ? 'warn' : 'info', raised: outcome.raised.length, changed: outcome.changed.length, cleared: outcome.cleared.length });
          if (outcome.blind.length > 0) ctx.log(`watchdog: cannot see with the row(s) for ${outcome.blind.join(', ')} (raised as ${PROBE_FAILED})`, { level: 'error', blind: outcome.blind.join(',') });
        })()
          .catch((error: unknown) => ctx.log(`watchdog: the look failed (made again in ${formatSpan(everyMs)}): ${error instanceof Error ? error.message : String(error)}`, { level: 'error' }))
          .finally(() => {
            running = undefined;
          });
      };
      look();
      const timer = setInterval(look, everyMs);
      return {
        stop: async () => {
          clearInterval(timer);
          await running;
          advisories.stop();
          view.close();
        },
      };
    },
  };
}

/** What an advisory heard is checked against at each look, in the store and on the broker. */
function advisoryObservations(store: Sql, manager: () => ReturnType<typeof jetstreamManager>): AdvisoryObservations {
  const keeps = async (node: string): Promise<boolean> =>
    (await store.query("SELECT 1 FROM nodes WHERE name = $1 AND lifecycle_state IN ('enrolled', 'disconnected')", [node])).length === 1;
  return {
    // A node released or revoked has no consumer to miss: its deletion was the controller's own.
    // The whole stream deleted takes every consumer with it: missing too, not a look that failed.
    consumerMissing: async (node) =>
      (await keeps(node)) && !(await consumerExists(await manager(), node).catch((error: unknown) => {
        if (isApiError(error, JetStreamApiCodes.StreamNotFound)) return false;
        throw error;
      })),
    reportedSince: async (node, at) => {
      const [row] = await store.query<{ reported_at: Date | string | null; kept: boolean }>(
        "SELECT reported_at, lifecycle_state IN ('enrolled', 'disconnected') AS kept FROM nodes WHERE name = $1",
        [node],
      );
      if (row === undefined || !row.kept) return true;
      return row.reported_at !== null && new Date(row.reported_at).getTime() > at.getTime();
    },
  };
}

/** The JetStream manager over `nc`, made at the first look that needs one (making one asks the broker). */
function onceManager(nc: Parameters<typeof jetstreamManager>[0]): () => ReturnType<typeof jetstreamManager> {
  let made: ReturnType<typeof jetstreamManager> | undefined;
  return () => {
    made ??= jetstreamManager(nc);
    made.catch(() => (made = undefined));
    return made;
  };
}
