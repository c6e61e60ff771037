import type { AnyMachineSnapshot, AnyStateMachine, EventObject, SnapshotFrom } from 'xstate';
import { getAdjacencyMap, getShortestPaths, getSimplePaths, serializeSnapshot } from 'xstate/graph';
import type { AdjacencyMap, StatePath, TraversalOptions } from 'xstate/graph';
import { eventText } from '../../actors/controller/charts/transition-text';
import { activeEventTypes, stateKey } from './machine-parts';
import { measureCoverage } from './model-coverage';
import type { ModelCoverage } from './model-coverage';
import type { ModelSpec } from './model-spec';
import { replayPath } from './replay-path';

/** One generated path: the real system is set up, then driven through `steps[1..]`. */
export interface ModelPath<TMachine extends AnyStateMachine> {
  /** `unmanaged → operator.install → hosted → …`, also the jest test's name. */
  name: string;
  /** `transition`: the shortest way to a snapshot plus one transition from it; `simple`: a simple path. */
  kind: 'transition' | 'simple' | 'initial';
  /** The input the path starts from: the spec's `input`, or its entry of `inputs`. */
  input: unknown;
  /** The first step is `xstate.init` into the initial snapshot; each later one an event and where it leads. */
  steps: Array<ModelPathStep<TMachine>>;
}

/** One step of a path: the event, its name in the path, and the model's snapshot after it. */
export interface ModelPathStep<TMachine extends AnyStateMachine> {
  event: EventObject;
  label: string;
  snapshot: SnapshotFrom<TMachine>;
}

/** The paths for a spec, how they were chosen, and the coverage they reach. */
export interface ModelPlan<TMachine extends AnyStateMachine> {
  name: string;
  paths: Array<ModelPath<TMachine>>;
  /** Distinct snapshots (per `serializeState`) reachable with the spec's samples, from every input. */
  snapshots: number;
  /** Paths kept of each kind, after dropping any path that is the start of a longer one. */
  transitionPaths: number;
  simplePaths: number;
  /** Simple paths found before the cap, or null when they were not looked for. */
  simplePathsFound: number | null;
  /** Says when simple paths were capped or skipped, and why; empty otherwise. */
  simplePathsNote: string;
  coverage: ModelCoverage;
}

const DEFAULT_TRAVERSAL_LIMIT = 20_000;
const DEFAULT_MAX_SIMPLE_PATHS = 40;
const DEFAULT_MAX_SIMPLE_SNAPSHOTS = 40;

/**
 * Explores the machine with the spec's sample events and chooses the paths to run: for every
 * transition reachable from the initial snapshot, the shortest path to its source plus that
 * transition (which also reaches every snapshot by a shortest path), then simple paths while the
 * machine is small. A path that is the start of a longer one is dropped: the longer one checks
 * every state it does.
 */
export function planModel<TMachine extends AnyStateMachine, TSystem>(spec: ModelSpec<TMachine, TSystem>): ModelPlan<TMachine> {
  const name = spec.name ?? spec.machine.id;
  const samples = collectSamples(spec.events);
  const explored = startsOf(spec, name).map((start) => planFrom(spec, name, samples, start));

  const paths = explored.flatMap((plan) => plan.paths);
  paths.sort((a, b) => a.steps.length - b.steps.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  uniqueNames(paths);

  const found = explored.map((plan) => plan.simplePathsFound);
  return {
    name,
    paths,
    snapshots: explored.reduce((sum, plan) => sum + plan.snapshots, 0),
    transitionPaths: paths.filter((path) => path.kind === 'transition').length,
    simplePaths: paths.filter((path) => path.kind === 'simple').length,
    simplePathsFound: found.some((count) => count === null) ? null : found.reduce<number>((sum, count) => sum + (count ?? 0), 0),
    simplePathsNote: explored.map((plan) => plan.simplePathsNote).filter((note) => note !== '').join('; '),
    coverage: measureCoverage({ ...spec, name, events: spec.events, states: spec.states }, paths),
  };
}

/** Where exploring starts: the spec's one input, or each of its labelled `inputs`. */
interface Start {
  /** Prefixes the path names (`[permanent] `); empty for a spec with one input. */
  label: string;
  input: unknown;
}

function startsOf(spec: { input?: unknown; inputs?: Readonly<Record<string, unknown>> }, name: string): Start[] {
  if (spec.inputs === undefined) return [{ label: '', input: spec.input }];
  if (spec.input !== undefined) throw new Error(`model spec ${name}: give \`input\` or \`inputs\`, not both`);
  const starts = Object.entries(spec.inputs).map(([label, input]) => ({ label, input }));
  if (starts.length === 0) throw new Error(`model spec ${name}: \`inputs\` is empty; give at least one, or use \`input\``);
  return starts;
}

/** The paths from one start, chosen as `planModel` says; names carry the start's label. */
function planFrom<TMachine extends AnyStateMachine, TSystem>(
  spec: ModelSpec<TMachine, TSystem>,
  name: string,
  samples: Samples,
  start: Start,
): { paths: Array<ModelPath<TMachine>>; snapshots: number; simplePathsFound: number | null; simplePathsNote: string } {
  const { machine } = spec;
  const serializeState = (snapshot: AnyMachineSnapshot): string =>
    spec.serializeState ? spec.serializeState(snapshot as SnapshotFrom<TMachine>) : serializeSnapshot(snapshot);
  const limit = spec.traversalLimit ?? DEFAULT_TRAVERSAL_LIMIT;
  const traversal = {
    input: start.input,
    events: (snapshot: AnyMachineSnapshot) => activeEventTypes(snapshot).flatMap((type) => samples.byType.get(type) ?? []),
    serializeState,
    serializeEvent: samples.serialize,
    limit,
  } as unknown as TraversalOptions<AnyMachineSnapshot, EventObject, unknown>;

  // Paths are rebuilt by replaying their events, so every step's snapshot is exactly what the
  // machine gives for that sequence, even when `serializeState` merges snapshots that differ.
  const pathOf = (events: EventObject[], kind: ModelPath<TMachine>['kind']): ModelPath<TMachine> => {
    const { snapshots } = replayPath(machine, start.input, events);
    const steps: Array<ModelPathStep<TMachine>> = snapshots.map((snapshot, index) => ({
      event: index === 0 ? { type: 'xstate.init' } : events[index - 1],
      label: index === 0 ? '' : samples.label(events[index - 1]),
      snapshot: snapshot as SnapshotFrom<TMachine>,
    }));
    return { name: `${start.label === '' ? '' : `[${start.label}] `}${pathName(steps)}`, kind, input: start.input, steps };
  };
  const eventsOf = (statePath: StatePath<AnyMachineSnapshot, EventObject>): EventObject[] =>
    statePath.steps.slice(1).map((step) => step.event);

  const adjacency = explore(
    () => getAdjacencyMap(machine, traversal as never) as AdjacencyMap<AnyMachineSnapshot, EventObject>,
    name,
    limit,
  );
  const shortest = new Map<string, ModelPath<TMachine>>();
  for (const statePath of getShortestPaths(machine, traversal as never) as Array<StatePath<AnyMachineSnapshot, EventObject>>) {
    shortest.set(serializeState(statePath.state), pathOf(eventsOf(statePath), 'transition'));
  }

  const transitionPaths: Array<ModelPath<TMachine>> = [];
  for (const [key, vertex] of Object.entries(adjacency)) {
    const head = shortest.get(key);
    if (!head) continue;
    const at = head.steps[head.steps.length - 1].snapshot as AnyMachineSnapshot;
    for (const { event } of Object.values(vertex.transitions) as Array<{ event: EventObject }>) {
      // A sample whose guards all fail leaves the machine where it was: no transition to test.
      if (machine.getTransitionData(at as never, event as never).length === 0) continue;
      transitionPaths.push(pathOf([...head.steps.slice(1).map((step) => step.event), event], 'transition'));
    }
  }

  const snapshots = Object.keys(adjacency).length;
  const simple = chooseSimplePaths(spec, snapshots, () =>
    (getSimplePaths(machine, traversal as never) as Array<StatePath<AnyMachineSnapshot, EventObject>>).map((p) => pathOf(eventsOf(p), 'simple')),
  samples.serialize);

  let paths = dropPrefixes([...transitionPaths, ...simple.paths], samples.serialize);
  if (paths.length === 0) paths = [...shortest.values()].slice(0, 1).map((path) => ({ ...path, kind: 'initial' as const }));
  const note = simple.note !== '' && start.label !== '' ? `${start.label}: ${simple.note}` : simple.note;
  return { paths, snapshots, simplePathsFound: simple.found, simplePathsNote: note };
}

interface Samples {
  byType: Map<string, EventObject[]>;
  label(event: EventObject): string;
  serialize(event: EventObject): string;
}

function collectSamples(events: Readonly<Record<string, { samples?: unknown } | undefined>>): Samples {
  const byType = new Map<string, EventObject[]>();
  const labels = new Map<EventObject, string>();
  for (const [type, entry] of Object.entries(events)) {
    if (entry === undefined) continue;
    const given = entry.samples as readonly EventObject[] | Readonly<Record<string, EventObject>> | undefined;
    const labelled: Array<[string, EventObject]> = given === undefined
      ? [['', { type }]]
      : Array.isArray(given)
        ? labelArray(given as readonly EventObject[])
        : Object.entries(given as Readonly<Record<string, EventObject>>);
    if (labelled.length === 0) throw new Error(`model spec: event "${type}" has an empty \`samples\`; leave it out to explore { type: "${type}" } alone`);
    for (const [label, sample] of labelled) {
      if (sample.type !== type) {
        throw new Error(`model spec: a sample under "${type}"${label ? ` (${label})` : ''} has type "${sample.type}"; put it under its own type`);
      }
      labels.set(sample, label);
    }
    byType.set(type, labelled.map(([, sample]) => sample));
  }
  return {
    byType,
    label: (event) => {
      const label = labels.get(event);
      return label ? `${eventText(event.type)} (${label})` : eventText(event.type);
    },
    serialize: (event) => (labels.has(event) ? `${event.type}\u0000${labels.get(event)}` : JSON.stringify(event)),
  };
}

// Several unlabelled samples of one type are told apart in path names by what they carry.
function labelArray(samples: readonly EventObject[]): Array<[string, EventObject]> {
  if (samples.length === 1) return [['', samples[0]]];
  const texts = samples.map((sample) => {
    const { type: _type, ...payload } = sample;
    const text = JSON.stringify(payload);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  });
  const distinct = new Set(texts).size === texts.length;
  return samples.map((sample, index) => [distinct ? texts[index] : `sample ${index + 1}`, sample]);
}

function explore<T>(run: () => T, name: string, limit: number): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof Error && error.message === 'Traversal limit exceeded') {
      throw new Error(
        `model ${name}: exploring the machine took more than ${limit} steps, so its snapshots (value and context) `
        + 'do not form a small finite graph; give the spec a `serializeState` that leaves out context that does not '
        + 'change behaviour, or fewer samples, or raise `traversalLimit`',
        { cause: error },
      );
    }
    throw error;
  }
}

function chooseSimplePaths<TMachine extends AnyStateMachine, TSystem>(
  spec: ModelSpec<TMachine, TSystem>,
  snapshots: number,
  find: () => Array<ModelPath<TMachine>>,
  serializeEvent: (event: EventObject) => string,
): { paths: Array<ModelPath<TMachine>>; found: number | null; note: string } {
  if (spec.simplePaths === false) return { paths: [], found: null, note: 'simple paths off in the spec' };
  const options = typeof spec.simplePaths === 'object' ? spec.simplePaths : {};
  const maxSnapshots = options.maxSnapshots ?? DEFAULT_MAX_SIMPLE_SNAPSHOTS;
  const maxPaths = options.maxPaths ?? DEFAULT_MAX_SIMPLE_PATHS;
  if (snapshots > maxSnapshots) {
    return { paths: [], found: null, note: `simple paths skipped: ${snapshots} snapshots, more than ${maxSnapshots}` };
  }
  const found = dropPrefixes(find(), serializeEvent);
  // The longest first: each covers the most, and the shorter ones are often their beginnings.
  found.sort((a, b) => b.steps.length - a.steps.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const kept = found.slice(0, maxPaths);
  const note = kept.length < found.length ? `simple paths capped: ${kept.length} of ${found.length} run` : '';
  return { paths: kept, found: found.length, note };
}

function dropPrefixes<TMachine extends AnyStateMachine>(
  paths: Array<ModelPath<TMachine>>,
  serializeEvent: (event: EventObject) => string,
): Array<ModelPath<TMachine>> {
  const keyed = paths
    .map((path) => ({ path, events: path.steps.slice(1).map((step) => serializeEvent(step.event)) }))
    .sort((a, b) => b.events.length - a.events.length);
  const kept: typeof keyed = [];
  for (const candidate of keyed) {
    const covered = kept.some((longer) => candidate.events.every((event, index) => longer.events[index] === event));
    if (!covered) kept.push(candidate);
  }
  return kept.map(({ path }) => path);
}

function pathName(steps: ReadonlyArray<{ label: string; snapshot: AnyMachineSnapshot }>): string {
  const parts = [stateText(steps[0].snapshot)];
  for (const step of steps.slice(1)) parts.push(step.label, stateText(step.snapshot));
  return parts.join(' → ');
}

function stateText(snapshot: AnyMachineSnapshot): string {
  const leaves = snapshot._nodes.filter((node) => node.type === 'atomic' || node.type === 'final').map(stateKey);
  return leaves.length === 1 ? leaves[0] : `{${leaves.join(', ')}}`;
}

function uniqueNames(paths: Array<{ name: string }>): void {
  const seen = new Map<string, number>();
  for (const path of paths) {
    const count = (seen.get(path.name) ?? 0) + 1;
    seen.set(path.name, count);
    if (count > 1) path.name = `${path.name} (${count})`;
  }
}
