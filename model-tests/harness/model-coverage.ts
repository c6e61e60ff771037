import type { AnyStateMachine, EventObject } from 'xstate';
import {
  acceptedEventTypes, coverableStates, declaredTransitions, restingStates, stateKey, transitionKey,
} from './machine-parts';
import { replayPath } from './replay-path';

/** How much of a machine a set of paths reaches, and what a spec leaves undriven or unchecked. */
export interface ModelCoverage {
  /** The model's name (the machine's id unless the spec names it). */
  machine: string;
  /** Every state node, nested ones included, by path (`enrolled.operating`). */
  states: CoverageTally;
  /** Every declared transition, as `source: event [guard] → target`. */
  transitions: CoverageTally;
  /** Event types the machine accepts that the spec has no driver for. */
  eventsWithoutDriver: string[];
  /** Atomic and final states the spec has no assertion for. */
  statesWithoutAssertion: string[];
  /** Spec event entries for types the machine never accepts (a typo, or a removed event). */
  unknownEvents: string[];
  /** Spec assertions for states the machine does not have. */
  unknownStates: string[];
}

/** Reached and unreached items of one kind, sorted. */
export interface CoverageTally {
  total: number;
  covered: string[];
  missing: string[];
}

/** The part of a spec that coverage reads: which events have drivers, which states assertions. */
export interface CoverageSubject {
  machine: AnyStateMachine;
  name?: string;
  input?: unknown;
  events: Readonly<Record<string, unknown>>;
  states: Readonly<Record<string, unknown>>;
}

/**
 * A path as coverage needs it: the events in order (an `xstate.init` first step is skipped), and
 * the input it starts from when that is not the subject's.
 */
export interface PathEvents {
  steps: ReadonlyArray<{ event: EventObject }>;
  input?: unknown;
}

/**
 * Replays every path on the pure machine and counts the state nodes and transitions they
 * reach, then compares the spec's drivers and assertions with what the machine declares.
 * Eventless transitions and states passed through on the way count as reached.
 */
export function measureCoverage(subject: CoverageSubject, paths: readonly PathEvents[]): ModelCoverage {
  const { machine } = subject;
  const reachedStates = new Set<string>();
  const reachedTransitions = new Set<string>();
  for (const path of paths) {
    const events = path.steps.map((step) => step.event).filter((event) => event.type !== 'xstate.init');
    const trace = replayPath(machine, 'input' in path ? path.input : subject.input, events);
    for (const node of trace.nodes) reachedStates.add(stateKey(node));
    for (const transition of trace.transitions) reachedTransitions.add(transitionKey(transition));
  }
  const states = coverableStates(machine).map(stateKey);
  const transitions = [...new Set(declaredTransitions(machine).map(transitionKey))];
  const accepted = acceptedEventTypes(machine);
  const stateKeys = new Set(states);
  return {
    machine: subject.name ?? machine.id,
    states: tally(states, reachedStates),
    transitions: tally(transitions, reachedTransitions),
    eventsWithoutDriver: accepted.filter((type) => subject.events[type] === undefined).sort(),
    statesWithoutAssertion: restingStates(machine).map(stateKey).filter((key) => subject.states[key] === undefined).sort(),
    unknownEvents: Object.keys(subject.events).filter((type) => !accepted.includes(type)).sort(),
    unknownStates: Object.keys(subject.states).filter((key) => !stateKeys.has(key)).sort(),
  };
}

/** What keeps coverage from being complete, one sentence each; empty when nothing does. */
export function coverageProblems(coverage: ModelCoverage): string[] {
  const problems: string[] = [];
  const list = (items: string[]): string => items.map((item) => `  - ${item}`).join('\n');
  if (coverage.eventsWithoutDriver.length > 0) {
    problems.push(`events the machine accepts with no driver in the spec (add them to \`events\`):\n${list(coverage.eventsWithoutDriver)}`);
  }
  if (coverage.statesWithoutAssertion.length > 0) {
    problems.push(`states with no assertion in the spec (add them to \`states\`):\n${list(coverage.statesWithoutAssertion)}`);
  }
  if (coverage.unknownEvents.length > 0) {
    problems.push(`spec events the machine never accepts (remove or rename them):\n${list(coverage.unknownEvents)}`);
  }
  if (coverage.unknownStates.length > 0) {
    problems.push(`spec assertions for states the machine does not have (remove or rename them):\n${list(coverage.unknownStates)}`);
  }
  if (coverage.states.missing.length > 0) {
    problems.push(`states no path reaches (a missing driver or sample event, or a state nothing leads to):\n${list(coverage.states.missing)}`);
  }
  if (coverage.transitions.missing.length > 0) {
    problems.push(`transitions no path takes (a missing sample event, or a guard no sample satisfies):\n${list(coverage.transitions.missing)}`);
  }
  return problems;
}

function tally(all: string[], reached: Set<string>): CoverageTally {
  const sorted = [...all].sort();
  return {
    total: sorted.length,
    covered: sorted.filter((key) => reached.has(key)),
    missing: sorted.filter((key) => !reached.has(key)),
  };
}
