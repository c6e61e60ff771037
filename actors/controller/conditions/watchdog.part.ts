import type { KV } from '@nats-io/kv';
import type { DoctorBoard } from '../doctor/doctor-board';
import { formatSpan } from '../nodes/format-span';
import type { ControllerPart } from '../serve/controller-parts';
import type { ConditionOutbox } from './condition-outbox';
import type { ConditionStore } from './condition-store';
import { SIGNALS, type SignalRow } from './signals-table';
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
      const view = storeWatchdogView({ store: ctx.store, calls: options.calls, doctorLast: () => options.doctor.last(), since: ctx.now() });
      let running: Promise<void> | undefined;
      const look = (): void => {
        if (running !== undefined || ctx.lease?.isActing() === false) return;
        running = (async () => {
          await options.outbox.flush();
          const outcome = await watchOnce(options.rows ?? SIGNALS, view, options.store, settings, ctx.now());
          const said = [
            ...outcome.raised.map((id) => `raised ${id}`),
            ...outcome.changed.map((id) => `changed ${id}`),
            ...outcome.cleared.map((id) => `cleared ${id}`),
          ];
          if (said.length > 0) ctx.log(`watchdog: ${said.join('; ')}`);
        })()
          .catch((error: unknown) => ctx.log(`watchdog: the look failed (made again in ${formatSpan(everyMs)}): ${error instanceof Error ? error.message : String(error)}`))
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
          view.close();
        },
      };
    },
  };
}
