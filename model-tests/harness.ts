/**
 * Model tests: every machine in machines/ is the specification of a real part, and this
 * harness turns the machine into jest tests that drive that part along the machine's paths.
 *
 * `describeModel(spec)` explores the machine with the sample events of the spec (xstate/graph:
 * adjacency map, shortest and simple paths), then registers, inside `describe('<name> model')`:
 *
 * - one test per path, named after it (`hosted → operator.enrol → enrolling → enrol.done →
 *   enrolled.operating`), which sets up a fresh real system, checks it is in the initial
 *   state, and for each step runs the event's driver and then the assertion of every state the
 *   machine is in afterwards (outermost first, so `enrolled` then `enrolled.operating`);
 * - `covers every state and transition of <name>`, which fails, naming what is missing, when
 *   a state node (nested ones included) or a declared transition (source, event, guard, target)
 *   is reached by no path, when an event type the machine accepts has no driver, when an atomic
 *   or final state has no assertion, or when the spec names events or states the machine does
 *   not have. A new state or event without a test therefore fails loudly.
 *
 * Paths: for every transition reachable from the initial snapshot, the shortest path to its
 * source plus that transition (so every reachable snapshot and transition is walked), then
 * simple paths while the machine has at most 40 snapshots, capped at 40 (see `simplePaths`).
 * A path that is the start of a longer one is dropped. A snapshot is the state value plus the
 * context (see `serializeState`), so guards that read context are explored with real values.
 *
 * Machines with `invoke` and `after` work: list their outcomes as events of the spec, keyed by
 * the type XState gives them, `xstate.done.actor.<invoke id>`, `xstate.error.actor.<invoke id>`
 * and `xstate.after.<delay name or ms>.<full state id>`; `doneEvent`, `errorEvent` and
 * `afterEvent` build samples of the exact shape. Their drivers make the real thing happen:
 * resolve or fail the fake child, advance the simulated clock.
 *
 * After the block, the coverage and each path's result go to
 * `.test-results/model-coverage/<name>.json`; `npm run model-tests` prints them as a table.
 *
 * A machine whose branches depend on its input (a supervisor slot's restart policy) is given
 * `inputs` by label instead of `input`: it is explored from each, and `setup` gets the path's.
 *
 * @example
 * ```ts
 * // a shortened model-tests/supervisor.model.test.ts
 * import { SimulatedClock } from 'xstate';
 * import { restartDelay, supervisorMachine } from '../machines/supervisor.machine';
 * import { FakeChild, settle } from '../actors/shared/supervisor/fake-child';
 * import { runRootSupervisor } from '../actors/shared/supervisor/run-root-supervisor';
 * import { supervise } from '../actors/shared/supervisor/supervise';
 * import { afterEventType, describeModel, doneEvent, errorEvent } from './harness';
 *
 * const limits = { child: 'worker', maxRestarts: 2, windowMs: 1_000, backoff: { baseMs: 100, maxMs: 150 } };
 *
 * describeModel({
 *   machine: supervisorMachine,
 *   inputs: { permanent: { ...limits, restart: 'permanent' }, transient: { ...limits, restart: 'transient' } },
 *   setup(input) {                                  // a fresh real system per path
 *     const clock = new SimulatedClock();
 *     const child = new FakeChild();
 *     const root = runRootSupervisor(
 *       supervise({ name: 'model', ...limits, children: [{ id: 'worker', logic: child.logic, restart: input!.restart }] }),
 *       { clock, exit: () => undefined },
 *     );
 *     return { clock, child, root };
 *   },
 *   teardown: (rig) => { rig.root.actor.stop(); },
 *   events: {
 *     'xstate.error.actor.child': {
 *       samples: { refused: errorEvent('child', new Error('connection refused')) },
 *       drive: async (rig, event) => { rig.child.current.fail(event.error.message); await settle(); },
 *     },
 *     'xstate.done.actor.child': {
 *       samples: [doneEvent('child', undefined)],
 *       drive: async (rig) => { rig.child.current.finish(); await settle(); },
 *     },
 *     [afterEventType('restartDelay', 'supervisor.backingOff')]: { // no samples: { type } alone
 *       drive: (rig, _event, step) => rig.clock.increment(restartDelay(limits.backoff, step.from.context.recentRestarts)),
 *     },
 *     [afterEventType('restartWindow', 'supervisor.running')]: { drive: (rig) => rig.clock.increment(limits.windowMs) },
 *     'supervisor.stop': { drive: async (rig) => { rig.root.actor.getSnapshot().children.worker?.send({ type: 'supervisor.stop' }); await settle(); } },
 *   },
 *   states: {
 *     running: (rig) => expect(rig.child.running).toBe(1),
 *     backingOff: (rig, snapshot) => expect(rig.root.tree().children[0]?.restarts).toBe(snapshot.context.recentRestarts),
 *     escalated: async (rig) => expect(await rig.root.done).toMatchObject({ outcome: 'escalated' }),
 *     stopped: (rig) => expect(rig.child.running).toBe(0),
 *   },
 * });
 * ```
 *
 * Call `describeModel` at the top level of a `*.model.test.ts` file in model-tests/. For tools
 * and tests of the harness itself, `planModel(spec)` returns the paths and coverage without
 * registering anything, `runModelPath(spec, path)` runs one path, and `measureCoverage` /
 * `coverageProblems` compute and explain coverage for any list of paths.
 */
import type { AnyStateMachine } from 'xstate';
import { coverageFileFor, coverageRecord, unplannedRecord, writeCoverageFile } from './harness/coverage-file';
import type { PathResult } from './harness/coverage-file';
import { coverageProblems } from './harness/model-coverage';
import type { ModelSpec } from './harness/model-spec';
import { planModel } from './harness/plan-model';
import type { ModelPlan } from './harness/plan-model';
import { runModelPath } from './harness/run-model-path';

export type { ModelEvent, ModelEvents, ModelSpec, ModelTransition, StateAssertion } from './harness/model-spec';
export type { ModelPath, ModelPathStep, ModelPlan } from './harness/plan-model';
export type { CoverageSubject, CoverageTally, ModelCoverage, PathEvents } from './harness/model-coverage';
export type { CoverageRecord, PathResult } from './harness/coverage-file';
export { afterEvent, afterEventType, doneEvent, errorEvent } from './harness/outcome-events';
export { coverageProblems, measureCoverage } from './harness/model-coverage';
export { planModel } from './harness/plan-model';
export { runModelPath } from './harness/run-model-path';
export { COVERAGE_DIR, coverageFileFor } from './harness/coverage-file';

/**
 * Registers the model tests of one machine with jest: one test per generated path and the
 * coverage test `covers every state and transition of <name>`, then writes the coverage file.
 * Returns the plan, for a test file that wants to assert something about it; when the spec
 * cannot be planned (a sample under the wrong type, a context that never repeats) it registers
 * only the coverage test, failing with the reason, and returns undefined.
 */
export function describeModel<TMachine extends AnyStateMachine, TSystem>(spec: ModelSpec<TMachine, TSystem>): ModelPlan<TMachine> | undefined {
  let plan: ModelPlan<TMachine>;
  try {
    plan = planModel(spec);
  } catch (error) {
    // A spec that cannot be planned still shows up as a failing model, in jest and the table.
    const name = spec.name ?? spec.machine.id;
    const problem = error instanceof Error ? error.message : String(error);
    describe(`${name} model`, () => {
      test(`covers every state and transition of ${name}`, () => {
        throw error;
      });
      afterAll(() => {
        if (spec.coverageFile !== false) writeCoverageFile(spec.coverageFile ?? coverageFileFor(name), unplannedRecord(name, problem));
      });
    });
    return undefined;
  }
  const results = new Map<string, PathResult>();
  describe(`${plan.name} model`, () => {
    for (const path of plan.paths) {
      test(path.name, async () => {
        results.set(path.name, 'failed');
        await runModelPath(spec, path);
        results.set(path.name, 'passed');
      }, spec.timeoutMs);
    }

    test(`covers every state and transition of ${plan.name}`, () => {
      const problems = coverageProblems(plan.coverage);
      if (problems.length > 0) throw new Error(`model ${plan.name} is not fully covered:\n${problems.join('\n')}`);
    });

    afterAll(() => {
      if (spec.coverageFile === false) return;
      writeCoverageFile(spec.coverageFile ?? coverageFileFor(plan.name), coverageRecord(plan, results));
    });
  });
  return plan;
}
