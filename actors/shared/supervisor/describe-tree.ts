import type { AnyActorRef, AnyMachineSnapshot, StateValue } from 'xstate';
import type { SupervisorContext } from '../../../machines/supervisor.machine';
import { isChildSlot, supervisorSpecOf } from './supervise';

/**
 * One node of the live supervision tree, as `mesh-control tree --json` prints it. A supervised
 * child is one node: its slot's state, restarts and last error, and — when the child is itself a
 * supervisor — that supervisor's children below it.
 */
export interface SupervisionTreeNode {
  id: string;
  /** For a child: `running`, `backingOff`, `escalated` or `stopped`. For a supervisor: `supervising`, `escalated` or `stopped`. */
  state: string;
  /** Restarts still counted against the limit: those since the child last stayed up for the window. */
  restarts: number;
  last_error?: string;
  /** The child's own state when it is a machine (`linked`, `backingOff.waiting`, …). */
  child_state?: string;
  children: SupervisionTreeNode[];
}

/**
 * Reads the live tree under a supervisor actor (or a single child slot). Reads snapshots only, so
 * it is safe to call at any time; a child that is between incarnations has no `child_state`.
 */
export function describeTree(ref: AnyActorRef): SupervisionTreeNode {
  const snapshot = ref.getSnapshot() as AnyMachineSnapshot;
  const spec = supervisorSpecOf(snapshot.machine);
  if (spec !== undefined) {
    return { id: spec.name, state: stateText(snapshot.value), restarts: 0, children: slotsOf(snapshot) };
  }
  if (isChildSlot(snapshot.machine)) return describeSlot(ref.id, snapshot);
  return { id: ref.id, state: snapshot.status, restarts: 0, children: [] };
}

function slotsOf(group: AnyMachineSnapshot): SupervisionTreeNode[] {
  return Object.entries(group.children as Record<string, AnyActorRef | undefined>)
    .filter((entry): entry is [string, AnyActorRef] => entry[1] !== undefined)
    .map(([id, slot]) => describeSlot(id, slot.getSnapshot() as AnyMachineSnapshot));
}

function describeSlot(id: string, slot: AnyMachineSnapshot): SupervisionTreeNode {
  const context = slot.context as SupervisorContext;
  const node: SupervisionTreeNode = {
    id,
    state: stateText(slot.value),
    restarts: context.recentRestarts,
    ...(context.lastError === undefined ? {} : { last_error: context.lastError }),
    children: [],
  };
  const child = (slot.children as Record<string, AnyActorRef | undefined>).child;
  if (child === undefined) return node;
  const childSnapshot = child.getSnapshot() as Partial<AnyMachineSnapshot>;
  if (childSnapshot.machine === undefined) return node;
  if (supervisorSpecOf(childSnapshot.machine) !== undefined) {
    return { ...node, child_state: stateText(childSnapshot.value as StateValue), children: slotsOf(childSnapshot as AnyMachineSnapshot) };
  }
  return { ...node, child_state: stateText(childSnapshot.value as StateValue), children: spawnedSupervisors(childSnapshot as AnyMachineSnapshot) };
}

// A machine that runs a supervisor of its own (the host's lifecycle spawns its node's): shown
// below it, as a nested supervisor is.
function spawnedSupervisors(machine: AnyMachineSnapshot): SupervisionTreeNode[] {
  return Object.values(machine.children as Record<string, AnyActorRef | undefined>)
    .filter((child): child is AnyActorRef => child !== undefined && supervisorSpecOf((child.getSnapshot() as Partial<AnyMachineSnapshot>).machine) !== undefined)
    .map((child) => describeTree(child));
}

/** `a`, or `a.b` for a nested state, or `a.b, c.d` for parallel regions. */
export function stateText(value: StateValue): string {
  if (typeof value === 'string') return value;
  return Object.entries(value)
    .map(([key, inner]) => (inner === undefined ? key : `${key}.${stateText(inner)}`))
    .join(', ');
}
