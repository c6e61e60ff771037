import { createActor, type Actor, type ActorOptions } from 'xstate';
import { canonicalJson } from '../../../schema/canonical';
import { ENDED_PLAN_STATES, planStateOf, planStateValue, type PlanContext, type PlanEvent, type PlanState } from '../../../machines/plan.machine';
import type { ControllerContext } from '../controller-context';
import { durationsOf } from '../durations/duration-recorder';
import { planLogic, type PlanLogic } from './plan.actor';
import { PlanWrittenElsewhere } from './plan-errors';
import { planTierStep } from './plan-tiers';
import { writePlan, type PlanRow } from './plans.repo';
import { PLAN_NODE_SEND_BOUND_MS, PLAN_SEND_RETRY, sendWithRetries, type SendRetry } from './send-with-retries';
import { sendPlanRevision, type NodeSendOutcome, type PlanRevision } from './send-plan-revision';

/** The clock a plan's wait runs on (XState's actor clock; `SimulatedClock` in tests). */
export type PlanClock = NonNullable<ActorOptions<PlanLogic>['clock']>;

/** What a runner is given by the plan book. */
export interface PlanRunnerDeps {
  ctx: ControllerContext;
  /** The plan as last read from the store. */
  row: PlanRow;
  revision: PlanRevision;
  /** How long the first machine has to report on the send. */
  firstReportWaitMs: number;
  /** The clock the plan's wait runs on; the system's unless given (tests simulate it). */
  clock?: PlanClock;
  /** Asked before each node is sent, with the send's signal: a hook for tests to hold a send. */
  beforeSend?: (plan: number, node: string, signal: AbortSignal) => Promise<void>;
  /** How a send the broker or store did not answer is tried again; PLAN_SEND_RETRY unless given. */
  sendRetry?: SendRetry;
  /** Longest one node's send may take before it counts as failed; PLAN_NODE_SEND_BOUND_MS unless given. */
  sendBoundMs?: number;
  /** The plan ended (done, closed, superseded) and that was written. */
  onEnded(runner: PlanRunner): void;
  /** The plan could not be written (or its actor failed): this runner has stopped working it. */
  onBroken(runner: PlanRunner, error: unknown): void;
}

/**
 * One open plan at work: the plan actor (planLogic) running the plan machine, and every step it
 * takes written to the store by compare-and-set, under the lease's gate and epoch, before the
 * next is written. A plan that was opened (`opening`) is opened from the row; any other is
 * restored as the store holds it and resumed, which starts its send or its wait again (the wait
 * counted from the first machine's send, not from now).
 *
 * A write refused (another controller wrote the plan, or this one stopped acting) stops the
 * runner: nothing more is sent under it here.
 */
export class PlanRunner {
  readonly id: number;
  readonly revision: PlanRevision;
  readonly #deps: PlanRunnerDeps;
  readonly #actor: Actor<PlanLogic>;
  #row: PlanRow;
  #written: string;
  #writes: Promise<void> = Promise.resolve();
  readonly #sends = new Set<Promise<unknown>>();
  #broken: unknown;
  #stopped = false;
  /** When this runner wrote the plan into `sending` (the rest's tier), by the controller's clock. */
  #sendingSince: Date | undefined;

  constructor(deps: PlanRunnerDeps) {
    this.#deps = deps;
    this.id = deps.row.id;
    this.revision = deps.revision;
    this.#row = deps.row;
    this.#written = serialize(deps.row.state, deps.row.context);
    const logic = planLogic({
      sendNode: (node, signal, resend) => this.#sendNode(node, signal, resend),
      firstReportWaitLeft: (context) => this.#firstReportWaitLeft(context),
    });
    // Restored as stored: an `opening` plan already holds its policy, nodes and first machine.
    const restored = logic.resolveState({ value: planStateValue(deps.row.state), context: deps.row.context });
    this.#actor = createActor(logic, { snapshot: restored, ...(deps.clock === undefined ? {} : { clock: deps.clock }) });
  }

  /** Starts working the plan: opens it, or resumes it from where the store says it is. */
  start(): void {
    this.#actor.subscribe({
      next: (snapshot) => this.#persist(planStateOf(snapshot.value), snapshot.context),
      error: (error) => this.#break(error),
    });
    this.#actor.start();
    if (this.#row.state === 'opening') {
      const { policy, targets, first } = this.#row.context;
      this.#actor.send({ type: 'plan.opened', policy, targets, first });
    } else {
      this.#actor.send({ type: 'controller.resumed' });
    }
  }

  /** Where the plan is now (possibly ahead of the store by a write under way). */
  state(): PlanState {
    return planStateOf(this.#actor.getSnapshot().value);
  }

  /** The plan's context now. */
  context(): PlanContext {
    return this.#actor.getSnapshot().context;
  }

  /** The plan as last written. */
  row(): PlanRow {
    return this.#row;
  }

  /** True once the runner stopped working the plan: its write was refused, or its actor failed. */
  isBroken(): boolean {
    return this.#broken !== undefined;
  }

  /**
   * Hands the plan an event and waits until what it did has been written; the row as written.
   * Throws the write's failure (NotActing, PlanWrittenElsewhere) when it could not be.
   */
  async send(event: PlanEvent): Promise<PlanRow> {
    if (this.#broken !== undefined) throw this.#broken;
    this.#actor.send(event);
    await this.settled();
    if (this.#broken !== undefined) throw this.#broken;
    return this.#row;
  }

  /** Resolves once every step taken so far has been written (or the runner broke). */
  async settled(): Promise<void> {
    for (;;) {
      const writes = this.#writes;
      await writes;
      if (writes === this.#writes) return;
    }
  }

  /**
   * Stops working the plan here: its actor stops (a send not yet started is not made), then the
   * sends under way and the writes queued are waited for. The plan stays as the store holds it,
   * for this controller or the next to resume.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#actor.stop();
    while (this.#sends.size > 0) await Promise.allSettled([...this.#sends]);
    await this.settled();
  }

  #sendNode(node: string, signal: AbortSignal, resend: boolean): Promise<NodeSendOutcome> {
    const work = (async (): Promise<NodeSendOutcome> => {
      await this.#deps.beforeSend?.(this.id, node, signal);
      if (signal.aborted) return { failed: 'the plan left the state that sends' };
      return sendWithRetries(() => sendPlanRevision(this.#deps.ctx, this.revision, node, { resend }), {
        retry: this.#deps.sendRetry ?? PLAN_SEND_RETRY,
        boundMs: this.#deps.sendBoundMs ?? PLAN_NODE_SEND_BOUND_MS,
        signal,
        stopped: () => this.#stopped,
        // Counted in the log, each attempt, with what the plan does next.
        failed: (attempt, reason, waitMs) =>
          this.#deps.ctx.log(
            `plans: plan ${this.id} could not send node ${node} ${this.revision.module} ${this.revision.version} (attempt ${attempt}): ${reason}; ${waitMs === undefined ? 'not tried again by this send' : `trying again in ${(waitMs / 1000).toFixed(1)} s`}`,
            { level: 'warn', plan: this.id, node, attempt },
          ),
      });
    })();
    this.#sends.add(work);
    void work.finally(() => this.#sends.delete(work)).catch(() => undefined);
    return work;
  }

  #firstReportWaitLeft({ first, sent }: PlanContext): number {
    const at = first === null ? undefined : sent[first]?.at;
    if (at === undefined) return this.#deps.firstReportWaitMs;
    return Date.parse(at) + this.#deps.firstReportWaitMs - this.#deps.ctx.now().getTime();
  }

  #persist(state: PlanState, context: PlanContext): void {
    const serialized = serialize(state, context);
    if (serialized === this.#written || this.#broken !== undefined) return;
    this.#written = serialized;
    this.#writes = this.#writes.then(() => this.#write(state, context));
  }

  async #write(state: PlanState, context: PlanContext): Promise<void> {
    if (this.#broken !== undefined) return;
    const { ctx } = this.#deps;
    try {
      ctx.lease?.assertActing(`write plan ${this.id}`);
      const epoch = ctx.epoch();
      const at = ctx.now();
      const row = await writePlan(ctx.store, this.id, this.#row.revision, epoch, { state, context, at });
      if (row === undefined) throw new PlanWrittenElsewhere(this.id, this.#row.revision, epoch);
      this.#tierHeard(this.#row, row, at);
      this.#row = row;
      if (ENDED_PLAN_STATES.includes(state)) this.#deps.onEnded(this);
    } catch (error) {
      this.#break(error);
    }
  }

  /** Counts a plan tier that ended with this write (planTierStep). */
  #tierHeard(before: PlanRow, after: PlanRow, at: Date): void {
    const step = planTierStep(before, after, at, this.#sendingSince);
    this.#sendingSince = step.sendingSince;
    if (step.endedMs !== undefined) durationsOf(this.#deps.ctx.store).heard('plan-tier', step.endedMs, at);
  }

  #break(error: unknown): void {
    if (this.#broken !== undefined) return;
    this.#broken = error;
    if (!this.#stopped) this.#actor.stop();
    this.#deps.onBroken(this, error);
  }
}

function serialize(state: PlanState, context: PlanContext): string {
  return canonicalJson([state, context]);
}
