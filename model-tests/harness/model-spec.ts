import type { AnyStateMachine, EventFromLogic, EventObject, InputFrom, SnapshotFrom } from 'xstate';

/**
 * What the model harness needs to test a real system against a machine: the machine, how to
 * make the real system undergo each event, how to tell it is in each state, and how to get a
 * fresh one for every path. See `describeModel` in model-tests/harness.ts for an example.
 */
export interface ModelSpec<TMachine extends AnyStateMachine, TSystem> {
  /** The pure machine from machines/. Its placeholder actors never run: only its graph is read. */
  machine: TMachine;
  /** Names the jest block and the coverage file; the machine's id unless given. */
  name?: string;
  /** Input for the machine's initial snapshot (the real system is set up to match it). */
  input?: InputFrom<TMachine>;
  /**
   * Several inputs, by label, for a machine whose branches depend on its input (a supervisor
   * slot's restart policy): the machine is explored from each, each path is named after its
   * input (`[permanent] running → …`), and coverage counts the paths of all of them together.
   * Give `input` or `inputs`, not both.
   */
  inputs?: Readonly<Record<string, InputFrom<TMachine>>>;
  /**
   * A fresh real system, in the machine's initial state. Called once per path, with the input
   * the path starts from (`input`, or the path's entry of `inputs`).
   */
  setup(input: InputFrom<TMachine> | undefined): TSystem | Promise<TSystem>;
  /** Releases what `setup` made (temp dirs, processes, actors). Runs even when a path fails. */
  teardown?(system: TSystem): void | Promise<void>;
  /**
   * One entry per event type the machine accepts, including the outcomes of its invoked actors
   * (`xstate.done.actor.<id>`, `xstate.error.actor.<id>`) and its delays
   * (`xstate.after.<delay>.<state id>`). A type the machine accepts without an entry fails the
   * coverage test, and so does an entry for a type it never accepts.
   */
  events: ModelEvents<TMachine, TSystem>;
  /**
   * Checks that the real system is in a state, keyed by the state's path below the machine
   * (`hosted`, `enrolled.operating`). Every atomic and final state needs one; a compound state
   * may have one too. All that match the expected snapshot run, outermost first.
   */
  states: Record<string, StateAssertion<TMachine, TSystem>>;
  /**
   * Which snapshots count as the same vertex when exploring. Defaults to the state value plus
   * the whole context; pass one that leaves out what does not change behaviour (timestamps,
   * counters past a cap) when the context would otherwise make the graph too large.
   */
  serializeState?(snapshot: SnapshotFrom<TMachine>): string;
  /**
   * Simple paths (every path that visits no snapshot twice) on top of the transition paths.
   * On by default, only when the machine has at most `maxSnapshots` snapshots (default 40), and
   * capped at `maxPaths` (default 40): the coverage file says how many there were.
   */
  simplePaths?: boolean | { maxPaths?: number; maxSnapshots?: number };
  /** Stops exploring after this many steps (default 20000), for a context that never repeats. */
  traversalLimit?: number;
  /** Where the coverage JSON goes; `.test-results/model-coverage/<name>.json` unless given, none if false. */
  coverageFile?: string | false;
  /** Jest timeout for one path, in milliseconds (default: jest's). */
  timeoutMs?: number;
}

/**
 * The event entries of a spec: typed for the machine's own events, open for the outcome and
 * delay events XState makes up.
 */
export type ModelEvents<TMachine extends AnyStateMachine, TSystem> = {
  [K in EventFromLogic<TMachine>['type']]?: ModelEvent<Extract<EventFromLogic<TMachine>, { type: K }>, TMachine, TSystem>;
} & {
  // Outcome and delay events have no declared type in the machine; drivers annotate them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [eventType: string]: ModelEvent<any, TMachine, TSystem> | undefined;
};

/** How one event type is explored on the model and made to happen in the real system. */
export interface ModelEvent<TEvent extends EventObject, TMachine extends AnyStateMachine, TSystem> {
  /**
   * Concrete events to explore. An array, or a record whose keys label each sample in path
   * names (`enrol.error (token expired)`). Without samples the event is `{ type }` alone, which
   * suits delays and events that carry nothing.
   */
  samples?: readonly TEvent[] | Readonly<Record<string, TEvent>>;
  /**
   * Makes the real system undergo `event`, and returns once it has settled: run the real
   * command, make the fake child fail, advance the simulated clock.
   */
  drive(system: TSystem, event: TEvent, step: ModelTransition<TMachine>): void | Promise<void>;
}

/** Checks that the real system is in the state `snapshot` stands for; throws when it is not. */
export type StateAssertion<TMachine extends AnyStateMachine, TSystem> = (
  system: TSystem,
  snapshot: SnapshotFrom<TMachine>,
) => void | Promise<void>;

/** The step a driver is asked to make happen, as the model sees it. */
export interface ModelTransition<TMachine extends AnyStateMachine> {
  /** The model's snapshot before the event. */
  from: SnapshotFrom<TMachine>;
  /** The model's snapshot after it: where the real system should now be. */
  to: SnapshotFrom<TMachine>;
  /** The event as named in the path (`enrol.error (token expired)`). */
  label: string;
}
