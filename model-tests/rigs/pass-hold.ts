import type { ReconcileReason } from '../../machines/reconcile.machine';
import type { PassReport } from '../../actors/host/reconcile/reconcile-pass';

/** One pass the reconcile actor started, as the hold saw it. */
export interface HeldPass {
  /** The reasons the actor started it for. */
  readonly reasons: ReconcileReason[];
  /** The signal the actor gave it; aborted when the actor left `applying`. */
  readonly signal: AbortSignal;
  /** True once the hold let it go on to the real pass. */
  released: boolean;
  /** How it ended: the real pass's report, or what it threw. Undefined while it runs. */
  result?: { report: PassReport } | { error: unknown };
  /** Settles once the pass has ended, either way; never rejects. */
  readonly ended: Promise<void>;
}

/**
 * A hold in front of a real pass function. Every pass the actor starts waits here until a test
 * lets it go, so a test can look at the system, and send triggers, while a pass is under way,
 * then decide when it runs. The real pass then runs with the reasons and the signal the actor
 * gave, so an abort on the way reaches it exactly as it would in the host.
 */
export class PassHold {
  /** Every pass started, in order. */
  readonly passes: HeldPass[] = [];
  private readonly gates = new Map<HeldPass, () => void>();

  constructor(private readonly run: (reasons: ReconcileReason[], signal: AbortSignal) => Promise<PassReport>) {}

  /** The pass function to give the reconcile actor. */
  readonly pass = (reasons: ReconcileReason[], signal: AbortSignal): Promise<PassReport> => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => { open = resolve; });
    const work = gate.then(() => this.run(reasons, signal));
    const held: HeldPass = {
      reasons,
      signal,
      released: false,
      ended: work.then(
        (report) => { held.result = { report }; },
        (error: unknown) => { held.result = { error }; },
      ),
    };
    this.gates.set(held, open);
    this.passes.push(held);
    return work;
  };

  /** Passes started and not yet let go. */
  waiting(): HeldPass[] {
    return this.passes.filter((held) => !held.released);
  }

  /** Passes that have not ended yet, held or running. */
  unfinished(): HeldPass[] {
    return this.passes.filter((held) => held.result === undefined);
  }

  /** Lets one held pass go on to the real pass and waits until it has ended. */
  async release(held: HeldPass): Promise<HeldPass> {
    const open = this.gates.get(held);
    if (open === undefined) throw new Error('that pass was not started through this hold');
    held.released = true;
    open();
    await held.ended;
    return held;
  }

  /** Lets every held pass go and waits for all of them: nothing runs on after a test. */
  async releaseAll(): Promise<void> {
    await Promise.all(this.waiting().map((held) => this.release(held)));
    await Promise.all(this.passes.map((held) => held.ended));
  }
}
