import type { DeafReason } from '../../../schema/heartbeat';

/** How a silent pull is looked into. */
export interface SilenceLookOptions {
  /** Asks the broker for the consumer's info; throws what the broker answered. */
  look(): Promise<unknown>;
  /** Which resource an error from `look` says is missing, if that is what it says. */
  missing(error: unknown): DeafReason | undefined;
  /** Called once a look finds the consumer or the stream gone. */
  lost(reason: DeafReason): void;
  /** The least time between two looks. */
  spacingMs: number;
  /** The clock, in ms; the system's unless given. */
  now?(): number;
}

/** Spacing between looks at a consumer whose pull has gone silent. */
export const SILENCE_LOOK_SPACING_MS = 60_000;

/**
 * What a host does when its pull misses the broker's heartbeats: at most one look at its
 * consumer per `spacingMs`, and none while one is in flight. The client's own answer to missed
 * heartbeats is a look every few seconds for as long as they are missed, by every host at once:
 * on a cluster whose servers are slow to answer, those looks were a load that kept them slow.
 * A look that finds the consumer gone makes the host deaf; one that goes unanswered is left
 * for the next silence.
 */
export function silenceLook(options: SilenceLookOptions): () => Promise<void> {
  const now = options.now ?? Date.now;
  let lastLook = Number.NEGATIVE_INFINITY;
  let looking = false;
  return async () => {
    if (looking || now() - lastLook < options.spacingMs) return;
    looking = true;
    lastLook = now();
    try {
      await options.look();
    } catch (error) {
      const reason = options.missing(error);
      if (reason !== undefined) options.lost(reason);
    } finally {
      looking = false;
    }
  };
}
