import type { AnyMachineSnapshot, AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { guardText } from '../../actors/controller/charts/transition-text';

/**
 * The parts of a machine that coverage counts, each with the key people read in reports:
 * states by their path below the machine (`enrolled.operating`), transitions as
 * `source: event [guard] → target`.
 */

/** A state node's key: its path below the machine, or `(machine)` for the root. */
export function stateKey(node: AnyStateNode): string {
  return node.path.length === 0 ? '(machine)' : node.path.join('.');
}

/** A transition's key: where it starts, the event (raw type), its guard and where it goes. */
export function transitionKey(transition: AnyTransitionDefinition): string {
  const event = transition.eventType === '' ? '(always)' : transition.eventType;
  const guard = transition.guard === undefined ? '' : ` [${guardText(transition.guard)}]`;
  const targets = transition.target && transition.target.length > 0
    ? transition.target.map((target) => stateKey(target)).join(', ')
    : '(stays)';
  return `${stateKey(transition.source)}: ${event}${guard} → ${targets}`;
}

/** Every state node that can be active, nested ones included; history pseudo-states are not. */
export function coverableStates(machine: AnyStateMachine): AnyStateNode[] {
  const nodes: AnyStateNode[] = [];
  const visit = (node: AnyStateNode): void => {
    for (const child of Object.values(node.states) as AnyStateNode[]) {
      if (child.type !== 'history') nodes.push(child);
      visit(child);
    }
  };
  visit(machine.root);
  return nodes;
}

/** The states a spec must assert: the atomic and final ones, where the system actually rests. */
export function restingStates(machine: AnyStateMachine): AnyStateNode[] {
  return coverableStates(machine).filter((node) => node.type === 'atomic' || node.type === 'final');
}

/** Every transition the machine declares: `on`, invoke outcomes, delays and eventless ones. */
export function declaredTransitions(machine: AnyStateMachine): AnyTransitionDefinition[] {
  const transitions: AnyTransitionDefinition[] = [];
  for (const node of [machine.root, ...coverableStates(machine)]) {
    for (const candidates of node.transitions.values()) transitions.push(...candidates);
    transitions.push(...(node.always ?? []));
  }
  return transitions;
}

/** Every event type some state of the machine has a transition for. */
export function acceptedEventTypes(machine: AnyStateMachine): string[] {
  const types = new Set<string>();
  for (const node of [machine.root, ...coverableStates(machine)]) {
    for (const type of node.transitions.keys()) types.add(type);
  }
  return [...types];
}

/** The event types the active states of `snapshot` have transitions for. */
export function activeEventTypes(snapshot: AnyMachineSnapshot): string[] {
  const types = new Set<string>();
  for (const node of snapshot._nodes) {
    for (const type of node.transitions.keys()) types.add(type);
  }
  return [...types];
}
