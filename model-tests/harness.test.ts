import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assign, fromPromise, setup } from 'xstate';
import { coverageRecord, writeCoverageFile } from './harness/coverage-file';
import {
  afterEvent, coverageProblems, describeModel, doneEvent, errorEvent, measureCoverage, planModel, runModelPath,
} from './harness';
import type { ModelSpec } from './harness';

// A lamp on a breaker: small, but with what real machines have: a nested state, an invoked
// actor with both outcomes, a named delay and a guard.
const lampMachine = setup({
  types: {
    events: {} as { type: 'switch.flipped' } | { type: 'operator.reset'; force: boolean },
  },
  actors: { warmUp: fromPromise<void>(async () => {}) },
  delays: { cooldown: 5000 },
  guards: { isForced: ({ event }) => 'force' in event && event.force },
}).createMachine({
  id: 'lamp',
  initial: 'off',
  states: {
    off: { on: { 'switch.flipped': 'on' } },
    on: {
      initial: 'warming',
      on: { 'switch.flipped': 'off' },
      states: {
        warming: {
          invoke: { id: 'warmUp', src: 'warmUp', onDone: 'lit', onError: '#lamp.tripped' },
        },
        lit: {},
      },
    },
    tripped: {
      after: { cooldown: 'off' },
      on: { 'operator.reset': { guard: 'isForced', target: 'off' } },
    },
  },
});

/** The real system of the self-test: a lamp written by hand, not derived from the machine. */
class Lamp {
  state: 'off' | 'warming' | 'lit' | 'tripped' = 'off';
  private trippedFor = 0;

  flip(): void {
    this.state = this.state === 'off' ? 'warming' : this.state === 'tripped' ? 'tripped' : 'off';
  }

  warmed(ok: boolean): void {
    if (this.state !== 'warming') throw new Error(`the lamp is ${this.state}, not warming`);
    this.state = ok ? 'lit' : 'tripped';
    this.trippedFor = 0;
  }

  wait(ms: number): void {
    this.trippedFor += ms;
    if (this.state === 'tripped' && this.trippedFor >= 5000) this.state = 'off';
  }

  reset(force: boolean): void {
    if (this.state === 'tripped' && force) this.state = 'off';
  }
}

type LampSpec = ModelSpec<typeof lampMachine, Lamp>;

const lampSpec: LampSpec = {
  machine: lampMachine,
  coverageFile: false,
  setup: () => new Lamp(),
  events: {
    'switch.flipped': { drive: (lamp) => lamp.flip() },
    'operator.reset': {
      samples: { forced: { type: 'operator.reset', force: true }, 'not forced': { type: 'operator.reset', force: false } },
      drive: (lamp, event) => lamp.reset(event.force),
    },
    'xstate.done.actor.warmUp': { samples: [doneEvent('warmUp', undefined)], drive: (lamp) => lamp.warmed(true) },
    'xstate.error.actor.warmUp': { samples: [errorEvent('warmUp', new Error('filament'))], drive: (lamp) => lamp.warmed(false) },
    'xstate.after.cooldown.lamp.tripped': { drive: (lamp) => lamp.wait(5000) },
  },
  states: {
    off: (lamp) => expect(lamp.state).toBe('off'),
    on: (lamp) => expect(['warming', 'lit']).toContain(lamp.state),
    'on.warming': (lamp) => expect(lamp.state).toBe('warming'),
    'on.lit': (lamp) => expect(lamp.state).toBe('lit'),
    tripped: (lamp) => expect(lamp.state).toBe('tripped'),
  },
};

// The harness run on the lamp, as a machine's model test would be.
const lampPlan = describeModel(lampSpec)!;

describe('model harness', () => {
  test('walks every state and transition of a machine with nested states, invokes, delays and guards', () => {
    expect(coverageProblems(lampPlan.coverage)).toEqual([]);
    expect(lampPlan.coverage.states.covered).toEqual(['off', 'on', 'on.lit', 'on.warming', 'tripped']);
    expect(lampPlan.coverage.transitions.covered).toEqual([
      'on.warming: xstate.done.actor.warmUp → on.lit',
      'on.warming: xstate.error.actor.warmUp → tripped',
      'on: switch.flipped → off',
      'off: switch.flipped → on',
      'tripped: operator.reset [isForced] → off',
      'tripped: xstate.after.cooldown.lamp.tripped → off',
    ].sort());
  });

  test('names each path after the states it passes and the events that move it', () => {
    expect(lampPlan.paths.map((path) => path.name)).toContain(
      'off → switch.flipped → on.warming → warmUp.error → tripped → operator.reset (forced) → off',
    );
    expect(lampPlan.paths.map((path) => path.name)).toContain(
      'off → switch.flipped → on.warming → warmUp.error → tripped → after cooldown → off',
    );
  });

  test('an uncovered state makes the coverage check fail, naming the state', () => {
    const onlyWarming = lampPlan.paths.filter((path) => !path.name.includes('tripped'));
    const coverage = measureCoverage(lampSpec, onlyWarming);
    expect(coverage.states.missing).toEqual(['tripped']);
    const problems = coverageProblems(coverage);
    expect(problems.join('\n')).toMatch(/states no path reaches[^]*- tripped/);
  });

  test('a transition no path takes is named with its guard', () => {
    const notForced = lampPlan.paths.filter((path) => !path.name.includes('(forced)'));
    const coverage = measureCoverage(lampSpec, notForced);
    expect(coverage.transitions.missing).toEqual(['tripped: operator.reset [isForced] → off']);
  });

  test('an event without a driver and a state without an assertion are named', () => {
    const { 'xstate.after.cooldown.lamp.tripped': _delay, ...events } = lampSpec.events;
    const { 'on.lit': _lit, ...states } = lampSpec.states;
    const plan = planModel({ ...lampSpec, events, states });
    expect(plan.coverage.eventsWithoutDriver).toEqual(['xstate.after.cooldown.lamp.tripped']);
    expect(plan.coverage.statesWithoutAssertion).toEqual(['on.lit']);
    expect(plan.coverage.transitions.missing).toEqual(['tripped: xstate.after.cooldown.lamp.tripped → off']);
    expect(coverageProblems(plan.coverage)).toHaveLength(3);
  });

  test('spec entries for events and states the machine does not have are named', () => {
    const plan = planModel({
      ...lampSpec,
      events: { ...lampSpec.events, 'switch.fliped': { drive: () => {} } },
      states: { ...lampSpec.states, dimmed: () => {} },
    });
    expect(plan.coverage.unknownEvents).toEqual(['switch.fliped']);
    expect(plan.coverage.unknownStates).toEqual(['dimmed']);
  });

  test('a failing path names the step and the state where the real system went elsewhere', async () => {
    class StuckLamp extends Lamp {
      override warmed(): void {}
    }
    const path = lampPlan.paths.find((candidate) => candidate.name.includes('warmUp.done'));
    expect(path).toBeDefined();
    await expect(runModelPath({ ...lampSpec, setup: () => new StuckLamp() }, path!)).rejects.toThrow(
      /after warmUp\.done \(step 2\), the system is not on\.lit/,
    );
  });

  test('a driver that throws is reported with the event it was driving', async () => {
    const path = lampPlan.paths[0];
    const spec: LampSpec = { ...lampSpec, events: { ...lampSpec.events, 'switch.flipped': { drive: () => { throw new Error('switch jammed'); } } } };
    await expect(runModelPath(spec, path)).rejects.toThrow(/step 1: driving switch\.flipped failed: switch jammed/);
  });

  test('tears the real system down even when a path fails', async () => {
    const tornDown: Lamp[] = [];
    const spec: LampSpec = { ...lampSpec, states: { ...lampSpec.states, off: () => { throw new Error('dark'); } }, teardown: (lamp) => { tornDown.push(lamp); } };
    await expect(runModelPath(spec, lampPlan.paths[0])).rejects.toThrow(/at the start, the system is not off: dark/);
    expect(tornDown).toHaveLength(1);
  });

  test('caps simple paths and says so', () => {
    const plan = planModel({ ...lampSpec, simplePaths: { maxPaths: 1 } });
    expect(plan.simplePathsFound).toBeGreaterThan(1);
    expect(plan.simplePathsNote).toBe(`simple paths capped: 1 of ${plan.simplePathsFound} run`);
    const skipped = planModel({ ...lampSpec, simplePaths: { maxSnapshots: 2 } });
    expect(skipped.simplePathsNote).toMatch(/simple paths skipped: \d+ snapshots, more than 2/);
  });

  test('refuses a machine whose context never repeats, and says how to bound it', () => {
    const counter = setup({ types: { context: {} as { count: number }, events: {} as { type: 'tick' } } }).createMachine({
      id: 'counter',
      context: { count: 0 },
      on: { tick: { actions: assign({ count: ({ context }) => context.count + 1 }) } },
    });
    const spec = { machine: counter, setup: () => null, events: { tick: { drive: () => {} } }, states: {}, traversalLimit: 100 };
    expect(() => planModel(spec)).toThrow(/serializeState/);
    const bounded = planModel({ ...spec, serializeState: (snapshot) => JSON.stringify(snapshot.value) });
    expect(bounded.coverage.transitions.missing).toEqual([]);
  });

  test('refuses a sample filed under another event type, saying where it belongs', () => {
    const misfiled = { ...lampSpec.events, 'switch.flipped': { samples: [{ type: 'operator.reset', force: true }], drive: () => {} } };
    expect(() => planModel({ ...lampSpec, events: misfiled as LampSpec['events'] })).toThrow(
      'model spec: a sample under "switch.flipped" has type "operator.reset"; put it under its own type',
    );
  });

  test('builds outcome and delay events in the shape XState delivers them', () => {
    expect(doneEvent('enrol', { node: 'a' })).toEqual({ type: 'xstate.done.actor.enrol', actorId: 'enrol', output: { node: 'a' } });
    expect(errorEvent('enrol', 'no')).toEqual({ type: 'xstate.error.actor.enrol', actorId: 'enrol', error: 'no' });
    expect(afterEvent('cooldown', 'lamp.tripped')).toEqual({ type: 'xstate.after.cooldown.lamp.tripped' });
  });

  test('writes a coverage file with the counts the table prints', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'model-coverage-'));
    try {
      const file = join(dir, 'lamp.json');
      const results = new Map(lampPlan.paths.map((path, index) => [path.name, index === 0 ? 'failed' as const : 'passed' as const]));
      writeCoverageFile(file, coverageRecord(lampPlan, results));
      const record = JSON.parse(await readFile(file, 'utf8'));
      expect(record.states).toEqual({ total: 5, covered: 5, missing: [] });
      expect(record.transitions).toEqual({ total: 6, covered: 6, missing: [] });
      expect(record.paths.failed).toBe(1);
      expect(record.paths.passed).toBe(lampPlan.paths.length - 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// A door whose one branch depends on its input: locked, a push jams it; unlocked, it opens.
// No single input reaches both, which is what `inputs` is for.
const doorMachine = setup({
  types: { input: {} as { locked: boolean }, context: {} as { locked: boolean }, events: {} as { type: 'push' } },
  guards: { isLocked: ({ context }) => context.locked },
}).createMachine({
  id: 'door',
  context: ({ input }) => ({ locked: input.locked }),
  initial: 'closed',
  states: {
    closed: { on: { push: [{ guard: 'isLocked', target: 'jammed' }, { target: 'open' }] } },
    jammed: { type: 'final' },
    open: { type: 'final' },
  },
});

/** The door of the self-test, written by hand. */
class Door {
  state: 'closed' | 'jammed' | 'open' = 'closed';
  constructor(readonly locked: boolean) {}
  push(): void {
    this.state = this.locked ? 'jammed' : 'open';
  }
}

const doorSpec: ModelSpec<typeof doorMachine, Door> = {
  machine: doorMachine,
  coverageFile: false,
  setup: (input) => new Door(input?.locked ?? false),
  events: { push: { drive: (door) => door.push() } },
  states: {
    closed: (door) => expect(door.state).toBe('closed'),
    jammed: (door) => expect(door.state).toBe('jammed'),
    open: (door) => expect(door.state).toBe('open'),
  },
};

describe('model harness with several inputs', () => {
  test('explores from each input, names each path after its input, and counts coverage over all of them', () => {
    const plan = planModel({ ...doorSpec, inputs: { locked: { locked: true }, unlocked: { locked: false } } });
    expect(plan.paths.map((path) => path.name).sort()).toEqual(['[locked] closed → push → jammed', '[unlocked] closed → push → open']);
    expect(coverageProblems(plan.coverage)).toEqual([]);
    expect(plan.snapshots).toBe(4);
  });

  test('says which branch one input alone leaves out', () => {
    const plan = planModel({ ...doorSpec, input: { locked: true } });
    expect(plan.coverage.transitions.missing).toEqual(['closed: push → open']);
  });

  test('sets each path\'s system up from the path\'s own input', async () => {
    const spec = { ...doorSpec, inputs: { locked: { locked: true }, unlocked: { locked: false } } };
    const given: unknown[] = [];
    const plan = planModel(spec);
    for (const path of plan.paths) {
      await runModelPath({ ...spec, setup: (input) => { given.push(input); return new Door(input?.locked ?? false); } }, path);
    }
    expect(given).toEqual(plan.paths.map((path) => path.input));
    expect(given).toContainEqual({ locked: true });
    expect(given).toContainEqual({ locked: false });
  });

  test('refuses a spec with both `input` and `inputs`, or with no inputs at all', () => {
    expect(() => planModel({ ...doorSpec, input: { locked: true }, inputs: { unlocked: { locked: false } } })).toThrow('model spec door: give `input` or `inputs`, not both');
    expect(() => planModel({ ...doorSpec, inputs: {} })).toThrow('model spec door: `inputs` is empty');
  });
});
