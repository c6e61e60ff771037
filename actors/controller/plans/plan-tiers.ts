import type { PlanRow } from './plans.repo';

/** What one write of a plan says about its tiers. */
export interface PlanTierStep {
  /** A tier ended with this write, this long (ms); undefined when none did. */
  endedMs?: number;
  /** When the rest's tier began, as known after this write (undefined when not known here). */
  sendingSince: Date | undefined;
}

/**
 * Reads a plan's write from `before` to `after` at `at` for its tiers: the first machine's
 * tier ends when its report that it applied is taken (counted from its send, which the plan
 * keeps, so a plan resumed after a restart still measures it); the rest's tier begins when the
 * plan enters `sending` and ends at `done`, and is measured only when this process saw it
 * begin (`sendingSince`). A tier a stop, close or supersession cut short measures nothing.
 */
export function planTierStep(before: Pick<PlanRow, 'state' | 'context'>, after: Pick<PlanRow, 'state' | 'context'>, at: Date, sendingSince: Date | undefined): PlanTierStep {
  const first = after.context.first === null ? undefined : after.context.sent[after.context.first];
  if (!before.context.firstApplied && after.context.firstApplied && first !== undefined) {
    return { endedMs: at.getTime() - Date.parse(first.at), sendingSince: after.state === 'sending' ? at : sendingSince };
  }
  if (after.state === 'sending' && before.state !== 'sending') return { sendingSince: at };
  if (after.state === 'done' && before.state === 'sending' && sendingSince !== undefined) return { endedMs: at.getTime() - sendingSince.getTime(), sendingSince: undefined };
  return { sendingSince };
}
