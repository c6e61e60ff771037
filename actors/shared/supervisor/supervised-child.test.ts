import { createActor, createMachine, fromPromise, type AnyActorLogic } from 'xstate';
import { settle } from './fake-child';
import { asSupervisedChild, ChildSupervisorGaveUp } from './supervised-child';

/** Runs logic to its end and says how it ended. */
async function endOf(logic: AnyActorLogic): Promise<{ status: string; output?: unknown; error?: unknown }> {
  const actor = createActor(logic);
  const ended = new Promise<{ status: string; output?: unknown; error?: unknown }>((resolve) => {
    actor.subscribe({
      complete: () => resolve({ status: 'done', output: actor.getSnapshot().output }),
      error: (error) => resolve({ status: 'error', error }),
    });
  });
  actor.start();
  await settle();
  return ended;
}

const report = { outcome: 'escalated' as const, child: 'reader', error: 'disk full', maxRestarts: 2, windowMs: 5_000 };

describe('asSupervisedChild', () => {
  // What a normal exit means (a permanent child's is restarted, a transient child's ends its
  // slot) is the slot machine's to decide, walked by model-tests/supervisor*.model.test.ts.
  it('lets a child end normally with its output', async () => {
    expect(await endOf(asSupervisedChild(fromPromise(async () => 'bye')))).toEqual({ status: 'done', output: 'bye' });
  });

  it('turns a nested supervisor\'s escalation into a failure naming its child and error', async () => {
    const ended = await endOf(asSupervisedChild(fromPromise(async () => report)));
    expect(ended.error).toBeInstanceOf(ChildSupervisorGaveUp);
    expect((ended.error as ChildSupervisorGaveUp).message).toBe('gave up on reader after more than 2 restarts in 5000 ms: disk full');
    expect((ended.error as ChildSupervisorGaveUp).report).toEqual(report);
  });

  it('passes a failure through unchanged', async () => {
    const failure = new Error('connection refused');
    const ended = await endOf(asSupervisedChild(fromPromise(async () => { throw failure; })));
    expect(ended).toEqual({ status: 'error', error: failure });
  });

  it('keeps a machine child\'s own states, and its normal end', async () => {
    const machine = createMachine({ id: 'job', initial: 'working', states: { working: { on: { finish: 'finished' } }, finished: { type: 'final' } } });
    const actor = createActor(asSupervisedChild(machine));
    actor.start();
    expect(actor.getSnapshot().value).toBe('working');
    expect(actor.getSnapshot().machine).toBe(machine);
    actor.send({ type: 'finish' });
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('fails a nested supervisor that escalates from the start', () => {
    const machine = createMachine({ id: 'gaveUp', initial: 'escalated', states: { escalated: { type: 'final' } }, output: () => report });
    const actor = createActor(asSupervisedChild(machine));
    const errors: unknown[] = [];
    actor.subscribe({ error: (error) => errors.push(error) });
    actor.start();
    expect(errors[0]).toBeInstanceOf(ChildSupervisorGaveUp);
  });
});
