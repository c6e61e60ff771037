import { createEmptyActor } from 'xstate';
import type { AnyMachineSnapshot, AnyStateMachine, AnyStateNode, AnyTransitionDefinition, EventObject } from 'xstate';

/** Every state node entered and every transition taken while a machine went through events. */
export interface ReplayTrace {
  /** The snapshot after each event (the first is the initial snapshot). */
  snapshots: AnyMachineSnapshot[];
  /** State nodes active at any microstep, eventless passes included. */
  nodes: Set<AnyStateNode>;
  /** Transitions taken, eventless and raised ones included. */
  transitions: AnyTransitionDefinition[];
}

/**
 * Runs `events` through the pure machine and records what it did at every microstep. Nothing
 * is started: invoked actors are created and never run, delays are never scheduled, so the
 * machine's placeholder actors are safe to leave in.
 */
export function replayPath(machine: AnyStateMachine, input: unknown, events: readonly EventObject[]): ReplayTrace {
  const trace: ReplayTrace = { snapshots: [], nodes: new Set(), transitions: [] };
  const scope = recordingScope((snapshot, transitions) => {
    for (const node of snapshot._nodes) trace.nodes.add(node);
    trace.transitions.push(...transitions);
  });
  let snapshot = machine.getInitialSnapshot(scope as never, input) as AnyMachineSnapshot;
  record(trace, snapshot);
  for (const event of events) {
    snapshot = machine.transition(snapshot, event, scope as never) as AnyMachineSnapshot;
    record(trace, snapshot);
  }
  return trace;
}

function record(trace: ReplayTrace, snapshot: AnyMachineSnapshot): void {
  trace.snapshots.push(snapshot);
  for (const node of snapshot._nodes) trace.nodes.add(node);
}

// XState reports each microstep's transitions only to inspectors, through the system of the
// scope a transition is computed in; this scope is the one xstate/graph uses to explore a
// machine, with that single hook added.
function recordingScope(onMicrostep: (snapshot: AnyMachineSnapshot, transitions: AnyTransitionDefinition[]) => void): unknown {
  const self = createEmptyActor();
  const system = Object.create(self.system) as { _sendInspectionEvent: (event: unknown) => void };
  system._sendInspectionEvent = (event: unknown) => {
    const inspected = event as { type: string; snapshot?: AnyMachineSnapshot; _transitions?: AnyTransitionDefinition[] };
    if (inspected.type === '@xstate.microstep' && inspected.snapshot) onMicrostep(inspected.snapshot, inspected._transitions ?? []);
  };
  return {
    self,
    logger: () => {},
    id: '',
    sessionId: 'model-replay',
    defer: () => {},
    system,
    stopChild: () => {},
    emit: () => {},
    actionExecutor: () => {},
  };
}
