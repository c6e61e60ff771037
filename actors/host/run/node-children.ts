import { fromCallback, type AnyActorLogic, type AnyStateMachine } from 'xstate';
import { supervise, type SupervisorLogic, type SupervisorSpec } from '../../shared/supervisor/supervise';
import { reconcileLogic } from '../reconcile/reconcile.actor';
import type { NodeWork } from './node-work';

/** The node supervisor's limits: a child failing more than three times a minute takes the node down with it. */
export const NODE_SUPERVISION: Pick<SupervisorSpec, 'maxRestarts' | 'windowMs' | 'backoff'> = {
  maxRestarts: 3,
  windowMs: 60_000,
  backoff: { baseMs: 500, maxMs: 10_000 },
};

/**
 * The work of a node, as a supervisor over one actor per part, each permanent (it runs for as
 * long as the host holds this identity, and is restarted alone when it fails):
 *
 * ```
 * node
 * ├─ link        the connection to the broker, pinned, retried with backoff, roused by SIGUSR1
 * ├─ intake      this node's declarations, from its queue on each connection
 * ├─ heartbeats  a heartbeat every period while linked
 * └─ reconcile   the reconcile machine: one pass at a time, drift every ten minutes
 * ```
 *
 * The lifecycle actor spawns it on becoming the node and stops it once released. `work()` is
 * the node's shared state; it is asked for when each actor starts, so an incarnation started
 * after a restart finds the same store and report queue.
 */
export function nodeLogic(work: () => NodeWork, driftIntervalMs?: number): SupervisorLogic {
  return supervise({
    name: 'node',
    ...NODE_SUPERVISION,
    children: [
      { id: 'link', logic: fromCallback(() => work().openLink()), restart: 'permanent' },
      { id: 'intake', logic: fromCallback(() => work().hearDeclarations()), restart: 'permanent' },
      { id: 'heartbeats', logic: fromCallback(() => work().sendHeartbeats()), restart: 'permanent' },
      { id: 'reconcile', logic: reconcileChild(work, driftIntervalMs), restart: 'permanent' },
    ],
  });
}

/**
 * The reconcile machine with the node's passes behind it. It tells the node's work when it has
 * started (the node asks it for passes, and it starts with one) and when it stops.
 */
function reconcileChild(work: () => NodeWork, driftIntervalMs: number | undefined): AnyActorLogic {
  const logic: AnyStateMachine = reconcileLogic({
    pass: (reasons, signal) => work().pass(reasons, signal),
    onPass: (report) => work().passed(report),
    ...(driftIntervalMs === undefined ? {} : { driftIntervalMs }),
  });
  // Delegates through the prototype, as asSupervisedChild does, so the machine keeps its identity.
  const attached = Object.create(logic) as AnyActorLogic;
  attached.start = (snapshot, scope) => {
    (logic as AnyActorLogic).start?.(snapshot, scope);
    const node = work();
    node.attachReconcile(scope.self);
    scope.self.subscribe({ complete: () => node.detachReconcile(scope.self), error: () => node.detachReconcile(scope.self) });
  };
  return attached;
}
