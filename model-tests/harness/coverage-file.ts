import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { AnyStateMachine } from 'xstate';
import { coverageProblems } from './model-coverage';
import type { ModelPlan } from './plan-model';

/** Where `npm run model-tests` looks for one JSON file per model. Git ignores `.test-results/`. */
export const COVERAGE_DIR = resolve(__dirname, '..', '..', '.test-results', 'model-coverage');

/** The outcome of one path test. `not run` when jest skipped it (a `-t` filter). */
export type PathResult = 'passed' | 'failed' | 'not run';

/** The coverage file: what the table prints, in the repository's snake_case file format. */
export interface CoverageRecord {
  machine: string;
  states: { total: number; covered: number; missing: string[] };
  transitions: { total: number; covered: number; missing: string[] };
  events_without_driver: string[];
  states_without_assertion: string[];
  unknown_events: string[];
  unknown_states: string[];
  problems: string[];
  snapshots: number;
  paths: {
    total: number;
    transition_paths: number;
    simple_paths: number;
    simple_paths_found: number | null;
    note: string;
    passed: number;
    failed: number;
    not_run: number;
  };
  results: Array<{ path: string; result: PathResult }>;
}

/** The default coverage file of a model. */
export function coverageFileFor(name: string): string {
  return join(COVERAGE_DIR, `${name}.json`);
}

/** Builds the coverage record of a plan and what its paths did. */
export function coverageRecord<TMachine extends AnyStateMachine>(
  plan: ModelPlan<TMachine>,
  results: ReadonlyMap<string, PathResult>,
): CoverageRecord {
  const { coverage } = plan;
  const perPath = plan.paths.map((path) => ({ path: path.name, result: results.get(path.name) ?? 'not run' as PathResult }));
  const count = (result: PathResult): number => perPath.filter((entry) => entry.result === result).length;
  return {
    machine: plan.name,
    states: { total: coverage.states.total, covered: coverage.states.covered.length, missing: coverage.states.missing },
    transitions: { total: coverage.transitions.total, covered: coverage.transitions.covered.length, missing: coverage.transitions.missing },
    events_without_driver: coverage.eventsWithoutDriver,
    states_without_assertion: coverage.statesWithoutAssertion,
    unknown_events: coverage.unknownEvents,
    unknown_states: coverage.unknownStates,
    problems: coverageProblems(coverage),
    snapshots: plan.snapshots,
    paths: {
      total: plan.paths.length,
      transition_paths: plan.transitionPaths,
      simple_paths: plan.simplePaths,
      simple_paths_found: plan.simplePathsFound,
      note: plan.simplePathsNote,
      passed: count('passed'),
      failed: count('failed'),
      not_run: count('not run'),
    },
    results: perPath,
  };
}

/** The coverage record of a model whose paths could not even be planned. */
export function unplannedRecord(name: string, problem: string): CoverageRecord {
  return {
    machine: name,
    states: { total: 0, covered: 0, missing: [] },
    transitions: { total: 0, covered: 0, missing: [] },
    events_without_driver: [],
    states_without_assertion: [],
    unknown_events: [],
    unknown_states: [],
    problems: [problem],
    snapshots: 0,
    paths: { total: 0, transition_paths: 0, simple_paths: 0, simple_paths_found: null, note: '', passed: 0, failed: 0, not_run: 0 },
    results: [],
  };
}

/** Writes a coverage record as pretty JSON, making the folder if needed. */
export function writeCoverageFile(file: string, record: CoverageRecord): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
}
