import type { AnyMachineSnapshot, AnyStateMachine, InputFrom, SnapshotFrom } from 'xstate';
import { stateKey } from './machine-parts';
import type { ModelSpec } from './model-spec';
import type { ModelPath } from './plan-model';

/**
 * Runs one path against a fresh real system: sets it up from the path's input, checks it is in the initial state,
 * then for each step drives the event and checks every state the model says it is now in
 * (outermost first). Tears the system down whatever happens. A failure names the step, the
 * event and the state, and keeps the driver's or assertion's error as its cause.
 */
export async function runModelPath<TMachine extends AnyStateMachine, TSystem>(
  spec: ModelSpec<TMachine, TSystem>,
  path: ModelPath<TMachine>,
): Promise<void> {
  const system = await spec.setup(path.input as InputFrom<TMachine> | undefined);
  try {
    for (const [index, step] of path.steps.entries()) {
      if (index > 0) {
        const entry = spec.events[step.event.type];
        if (!entry) throw new Error(`step ${index} (${step.label}): the spec has no driver for "${step.event.type}"`);
        const from = path.steps[index - 1].snapshot;
        try {
          await entry.drive(system, step.event, { from, to: step.snapshot, label: step.label });
        } catch (error) {
          throw explained(`step ${index}: driving ${step.label} failed`, error);
        }
      }
      await assertStates(spec, system, step.snapshot, index === 0 ? 'at the start' : `after ${step.label} (step ${index})`);
    }
  } finally {
    await spec.teardown?.(system);
  }
}

async function assertStates<TMachine extends AnyStateMachine, TSystem>(
  spec: ModelSpec<TMachine, TSystem>,
  system: TSystem,
  snapshot: SnapshotFrom<TMachine>,
  when: string,
): Promise<void> {
  for (const node of (snapshot as AnyMachineSnapshot)._nodes) {
    const key = stateKey(node);
    const assertion = spec.states[key];
    if (!assertion) continue;
    try {
      await assertion(system, snapshot);
    } catch (error) {
      throw explained(`${when}, the system is not ${key}`, error);
    }
  }
}

// Says where on the path it failed, and keeps the original stack so jest points at the line
// of the driver or assertion rather than at the harness.
function explained(where: string, error: unknown): Error {
  const message = `${where}: ${error instanceof Error ? error.message : String(error)}`;
  const wrapped = new Error(message, { cause: error });
  if (error instanceof Error && error.stack) {
    const frames = error.stack.split('\n').filter((line) => /^\s+at /.test(line));
    wrapped.stack = [`Error: ${message}`, ...frames].join('\n');
  }
  return wrapped;
}
