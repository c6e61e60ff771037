import type { AnyActorLogic, Snapshot } from 'xstate';
import { isEscalationReport, limitText, type EscalationReport } from '../../../machines/supervisor.machine';

/** How a child's normal exit is treated; the slot's machine decides it (machines/supervisor.machine). */
export type { RestartPolicy } from '../../../machines/supervisor.machine';

/** A child that is itself a supervisor gave up on one of its children: a failure of that supervisor. */
export class ChildSupervisorGaveUp extends Error {
  readonly report: EscalationReport;

  constructor(report: EscalationReport) {
    super(`gave up on ${report.child} after ${limitText(report)}: ${report.error}`);
    this.name = 'ChildSupervisorGaveUp';
    this.report = report;
  }
}

/**
 * The child's logic as its slot runs it: the same logic, except that a nested supervisor's
 * escalation report ends the actor in error instead, so the slot's machine sees
 * `xstate.error.actor.child` for it under either restart policy. Every other normal exit reaches
 * the slot as `xstate.done.actor.child`, and the slot's restart policy says what it means.
 *
 * Everything else is the child's own: its snapshots, its children and its state pass through
 * untouched, so the live tree still shows the child as it is.
 */
export function asSupervisedChild<TLogic extends AnyActorLogic>(logic: TLogic): TLogic {
  const judge = <TSnapshot extends Snapshot<unknown>>(snapshot: TSnapshot): TSnapshot => {
    if (snapshot.status !== 'done') return snapshot;
    const output = (snapshot as { output?: unknown }).output;
    return isEscalationReport(output) ? failed(snapshot, new ChildSupervisorGaveUp(output)) : snapshot;
  };
  // Delegate through the prototype so the logic keeps its identity (id, config, provide…), and
  // call the original's methods on the original, which is what their `this` expects.
  const supervised = Object.create(logic) as TLogic;
  supervised.getInitialSnapshot = (scope, input) => judge(logic.getInitialSnapshot(scope, input));
  supervised.transition = (snapshot, event, scope) => judge(logic.transition(snapshot, event, scope));
  return supervised;
}

function failed<TSnapshot extends Snapshot<unknown>>(snapshot: TSnapshot, error: Error): TSnapshot {
  return { ...snapshot, status: 'error', output: undefined, error };
}
