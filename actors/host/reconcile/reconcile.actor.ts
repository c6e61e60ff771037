import { fromPromise } from 'xstate';
import { reconcileMachine, type PassInput } from '../../../machines/reconcile.machine';
import type { PassReport } from './reconcile-pass';

/** What the reconcile actor calls: one pass, and where its report goes. */
export interface ReconcileDeps {
  /** Runs one pass; aborting the signal stops it between resources. */
  pass(reasons: PassInput['reasons'], signal: AbortSignal): Promise<PassReport>;
  /** Hears every finished pass (the link reports it upward; the CLI prints it). */
  onPass?(report: PassReport): void;
  /** The drift period (default ten minutes). */
  driftIntervalMs?: number;
}

/**
 * The reconcile machine with real work behind it: one pass at a time, triggers during a pass
 * coalesced into one more, drift every ten minutes while idle.
 */
export function reconcileLogic(deps: ReconcileDeps) {
  return reconcileMachine.provide({
    actors: {
      pass: fromPromise<void, PassInput>(async ({ input, signal }) => {
        const report = await deps.pass(input.reasons, signal);
        // A pass cut short by shutdown is not an account of the machine: nothing goes upward.
        if (!signal.aborted) deps.onPass?.(report);
      }),
    },
    ...(deps.driftIntervalMs === undefined ? {} : { delays: { driftInterval: deps.driftIntervalMs } }),
  });
}
