import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { delayText, eventText, guardText } from './transition-text';

/**
 * A machine read for drawing: states in document order with what a reader needs to see, and
 * transitions with their labels already worded. Both chart formats draw from this, so the
 * Mermaid text and the SVG always say the same thing.
 */
export interface ChartMachine {
  id: string;
  description: string | undefined;
  root: ChartState;
  transitions: ChartTransition[];
}

/** One state as drawn. */
export interface ChartState {
  /** The full XState id (`lifecycle.enrolled.operating`), unique in the machine. */
  id: string;
  /** The state's own key (`operating`). */
  key: string;
  kind: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  description: string | undefined;
  /** Ids of the invoked actors, as `invoke enrol`. */
  invokes: string[];
  /** The id of the initial child of a compound state. */
  initial: string | undefined;
  children: ChartState[];
}

/** One transition as drawn; a transition with several targets is one of these per target. */
export interface ChartTransition {
  source: string;
  /** The target's id, or the source's for a transition that stays (actions only). */
  target: string;
  /** True when the transition has no target: it runs actions and stays. */
  stays: boolean;
  kind: 'event' | 'done' | 'error' | 'delay' | 'always';
  event: string;
  guard: string | undefined;
  actions: string[];
}

/** Reads a machine into the chart model. */
export function chartModel(machine: AnyStateMachine): ChartMachine {
  const transitions: ChartTransition[] = [];
  const visit = (node: AnyStateNode): ChartState => {
    for (const transition of ownTransitions(node)) transitions.push(...chartTransitions(machine, transition));
    const children = (Object.values(node.states) as AnyStateNode[]).map(visit);
    const initialTarget = node.type === 'compound' ? node.initial?.target?.[0] : undefined;
    return {
      id: node.id,
      key: node.key,
      kind: node.type,
      description: node.description,
      invokes: node.invoke.map((definition) => definition.id),
      initial: initialTarget?.id,
      children,
    };
  };
  const root = visit(machine.root);
  return { id: machine.id, description: machine.root.description, root, transitions };
}

function ownTransitions(node: AnyStateNode): AnyTransitionDefinition[] {
  const all: AnyTransitionDefinition[] = [];
  for (const candidates of node.transitions.values()) all.push(...candidates);
  all.push(...(node.always ?? []));
  return all;
}

function chartTransitions(machine: AnyStateMachine, transition: AnyTransitionDefinition): ChartTransition[] {
  const type = transition.eventType;
  const kind: ChartTransition['kind'] = type === ''
    ? 'always'
    : type.startsWith('xstate.done.')
      ? 'done'
      : type.startsWith('xstate.error.')
        ? 'error'
        : type.startsWith('xstate.after.')
          ? 'delay'
          : 'event';
  const guard = transition.guard === undefined ? undefined : guardText(transition.guard);
  const actions = transition.actions.map(actionText).filter((text) => text !== '');
  const base = { source: transition.source.id, kind, event: eventLabel(machine, transition), guard, actions };
  if (!transition.target || transition.target.length === 0) return [{ ...base, target: transition.source.id, stays: true }];
  return transition.target.map((target) => ({ ...base, target: target.id, stays: false }));
}

// A named delay shows its default too (`after releaseRetryDelay (30 s)`) when the machine
// declares one as a number, so a reader knows the order of magnitude without the code.
function eventLabel(machine: AnyStateMachine, transition: AnyTransitionDefinition): string {
  const text = eventText(transition.eventType);
  const delay = (transition as { delay?: unknown }).delay;
  if (typeof delay === 'string') {
    const provided = (machine.implementations.delays as Record<string, unknown> | undefined)?.[delay];
    if (typeof provided === 'number') return `${text} (${delayText(provided)})`;
  }
  return text;
}

function actionText(action: unknown): string {
  if (typeof action === 'string') return action;
  if (typeof action === 'object' && action !== null && typeof (action as { type?: unknown }).type === 'string') {
    return (action as { type: string }).type;
  }
  if (typeof action === 'function') {
    const name = (action as { type?: unknown; name: string }).type;
    if (typeof name === 'string' && !name.startsWith('xstate.')) return name;
    // Inline assign/raise and friends say what kind of thing they are, not what they do.
    return '';
  }
  return '';
}
