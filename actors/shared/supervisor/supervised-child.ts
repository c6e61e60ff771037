import type { AnyActorLogic, Snapshot } from 'xstate';
import { isEscalationReport, limitText, type EscalationReport } from '../../../machines/supervisor.machine';

/**
 * What a normal exit of a child means, as in OTP. `permanent`: the child must always run, so a
 * normal exit is a failure and it is restarted (a daemon, a link). `transient`: a normal exit is
 * the end of its work; only a failure is restarted (a migration, a one-off sync).
 */
export type RestartPolicy = 'permanent' | 'transient';

/** A permanent child ended normally: for a child that must always run, that is a failure. */
export class PermanentChildExited extends Error {
  constructor() {
    super('exited although it is permanent');
    this.name = 'PermanentChildExited';
  }
}

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
 * The child's logic as its slot runs it: the same logic, except that an end which is a failure
 * for this child (a nested supervisor's escalation report; any normal exit of a permanent child)
 * ends the actor in error instead, so the slot's machine sees `xstate.error.actor.child` for
 * every failure and `xstate.done.actor.child` only for a clean end.
 *
 * Everything else is the child's own: its snapshots, its children and its state pass through
 * untouched, so the live tree still shows the child as it is.
 */
export function asSupervisedChild<TLogic extends AnyActorLogic>(logic: TLogic, restart: RestartPolicy): TLogic {
  const judge = <TSnapshot extends Snapshot<unknown>>(snapshot: TSnapshot): TSnapshot => {
    if (snapshot.status !== 'done') return snapshot;
    const output = (snapshot as { output?: unknown }).output;
    if (isEscalationReport(output)) return failed(snapshot, new ChildSupervisorGaveUp(output));
    if (restart === 'permanent') return failed(snapshot, new PermanentChildExited());
    return snapshot;
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
