import { fromPromise } from 'xstate';
import { planMachine, type PlanContext, type SendFirstInput, type SendOutcome, type SendRestInput } from '../../../machines/plan.machine';
import type { NodeSendOutcome } from './send-plan-revision';

/** What the plan actor does in the world: send one node the revision, and tell the time left to wait. */
export interface PlanActorDeps {
  /** Sends `node` the plan's revision (sendPlanRevision), again when `resend`; never throws. */
  sendNode(node: string, signal: AbortSignal, resend: boolean): Promise<NodeSendOutcome>;
  /**
   * Milliseconds left of the first machine's wait, counted from its send as `context` records it
   * (so a resumed plan keeps its bound, and a retried one starts a new one).
   */
  firstReportWaitLeft(context: PlanContext): number;
}

/**
 * The plan machine with its sends and its wait: `sendFirst` sends the first machine, `sendRest`
 * every node given at once, each node's outcome kept apart so one failure keeps what went out.
 * A send already under way when the plan leaves the state (closed, superseded) finishes; it is
 * the nodes not yet started that are not sent.
 */
export function planLogic(deps: PlanActorDeps) {
  const sendEach = async (nodes: readonly string[], signal: AbortSignal, resend = false): Promise<SendOutcome> => {
    const outcome: SendOutcome = { sent: {}, failed: {}, skipped: {} };
    await Promise.all(
      nodes.map(async (node) => {
        if (signal.aborted) return;
        const result = await deps.sendNode(node, signal, resend).catch((error: unknown): NodeSendOutcome => ({ failed: (error as Error)?.message ?? String(error) }));
        if ('sent' in result) outcome.sent[node] = result.sent;
        else if ('failed' in result) outcome.failed[node] = result.failed;
        else outcome.skipped[node] = result.skipped;
      }),
    );
    return outcome;
  };
  return planMachine.provide({
    actors: {
      sendFirst: fromPromise<SendOutcome, SendFirstInput>(({ input, signal }) => sendEach([input.node], signal, input.resend)),
      sendRest: fromPromise<SendOutcome, SendRestInput>(({ input, signal }) => sendEach(input.nodes, signal)),
    },
    delays: {
      // Given the context being entered with, not the actor's last snapshot, which still holds the
      // send before a retry while the transition into the wait is being taken.
      firstReportWait: ({ context }) => Math.max(0, deps.firstReportWaitLeft(context)),
    },
  });
}

/** The logic {@link planLogic} returns. */
export type PlanLogic = ReturnType<typeof planLogic>;
