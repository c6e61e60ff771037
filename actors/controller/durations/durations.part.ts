import * as z from 'zod';
import type { ControllerPart } from '../serve/controller-parts';
import { parseSince } from '../hand-acts/parse-since';
import { DURATION_KINDS, DURATIONS_KEPT_MS, durationsOf, windowOf } from './duration-recorder';
import { formatDurations, type DurationsListing } from './format-durations';
import { summariseDurations } from './summarise-durations';

/** The arguments of `durations`: the window (`24h` unless given) and one kind. */
export const DurationsArgs = z.strictObject({
  since: z.string().optional(),
  kind: z.enum(DURATION_KINDS, { error: `expected one of ${DURATION_KINDS.join(', ')}` }).optional(),
});

/** The window `durations` reads unless told. */
export const DURATIONS_DEFAULT_SINCE = '24h';

/** How often what was heard is written, and how often old windows are pruned. */
export interface DurationsOptions {
  flushEveryMs?: number;
  pruneEveryMs?: number;
}

/**
 * Durations in the serving controller: writes the counts the report receiver, heartbeat
 * tracker and plan runners made (every 10 s, and once more on stop), prunes windows older than
 * 30 days (hourly), and answers `durations`.
 */
export function durationsPart(options: DurationsOptions = {}): ControllerPart {
  return {
    name: 'durations',
    start: async (ctx, verbs) => {
      const recorder = durationsOf(ctx.store);
      const flush = (): Promise<void> =>
        recorder.flush().catch((error: unknown) => ctx.log(`durations: ${recorder.pendingCounts()} counts could not be written (kept for the next try): ${error instanceof Error ? error.message : String(error)}`, { level: 'warn' }));
      const prune = (): Promise<void> =>
        recorder.prune(ctx.now()).then(
          (gone) => (gone > 0 ? ctx.log(`durations: ${gone} counts older than 30 days pruned`, { pruned: gone }) : undefined),
          (error: unknown) => ctx.log(`durations: old counts could not be pruned (tried again within the hour): ${error instanceof Error ? error.message : String(error)}`, { level: 'warn' }),
        );
      const flushTimer = setInterval(() => void flush(), options.flushEveryMs ?? 10_000);
      const pruneTimer = setInterval(() => void prune(), options.pruneEveryMs ?? 3_600_000);
      await prune();
      verbs.register(
        'durations',
        DurationsArgs,
        async (verbCtx, args) => {
          const since = args.since ?? DURATIONS_DEFAULT_SINCE;
          const from = new Date(windowOf(verbCtx.now().getTime() - parseSince(since, DURATIONS_KEPT_MS, '30d')));
          // What was heard a moment ago counts too.
          await recorder.flush();
          const listing: DurationsListing = { since, from: from.toISOString(), kinds: await summariseDurations(verbCtx.store, from, args.kind) };
          return { result: listing, text: formatDurations(listing) };
        },
        { query: true },
      );
      return {
        stop: async () => {
          clearInterval(flushTimer);
          clearInterval(pruneTimer);
          await flush();
        },
      };
    },
  };
}
