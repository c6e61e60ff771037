import { createActor, fromPromise } from 'xstate';
import { DEFAULT_MAX_ATTEMPTS, launcherMachine, type LauncherInput, type RollBackInput } from './launcher.machine';

/** A stand-in for the host or the package manager: records each run and ends it when told. */
class FakeWork<TInput> {
  readonly runs: TInput[] = [];
  private settle: { resolve: () => void; reject: (error: Error) => void } | null = null;

  readonly logic = fromPromise<void, TInput>(({ input }) => {
    this.runs.push(input);
    return new Promise<void>((resolve, reject) => { this.settle = { resolve, reject }; });
  });

  succeed(): void {
    this.take().resolve();
  }

  fail(message: string): void {
    this.take().reject(new Error(message));
  }

  private take(): { resolve: () => void; reject: (error: Error) => void } {
    const settle = this.settle;
    if (settle === null) throw new Error('nothing is running');
    this.settle = null;
    return settle;
  }
}

const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

function launch(input: LauncherInput = {}) {
  const host = new FakeWork<unknown>();
  const rollBack = new FakeWork<RollBackInput>();
  const actor = createActor(launcherMachine.provide({ actors: { host: host.logic, rollBack: rollBack.logic } }), { input });
  actor.start();
  return { actor, host, rollBack };
}

describe('launcherMachine', () => {
  it('counts the start and runs the host on a freshly installed machine', () => {
    const { actor, host } = launch();
    expect(actor.getSnapshot().value).toBe('supervising');
    expect(actor.getSnapshot().context).toMatchObject({ attempts: 1, maxAttempts: DEFAULT_MAX_ATTEMPTS, rolledBack: false, knownGood: undefined });
    expect(host.runs).toHaveLength(1);
  });

  it('starts the host again after it exits, whether it exited 0 or crashed, counting every start', async () => {
    const { actor, host } = launch();
    host.succeed();
    await settled();
    expect(actor.getSnapshot().context.attempts).toBe(2);
    host.fail('exit 1');
    await settled();
    expect(actor.getSnapshot().value).toBe('supervising');
    expect(actor.getSnapshot().context.attempts).toBe(3);
    expect(host.runs).toHaveLength(3);
  });

  it('rolls back to known-good once the starts pass the limit, then gives that version its own starts', async () => {
    const { actor, host, rollBack } = launch({ knownGood: '1.4.2' });
    for (let start = 1; start <= 3; start += 1) {
      host.fail('crashed on start');
      await settled();
    }
    expect(actor.getSnapshot().value).toBe('rollingBack');
    expect(rollBack.runs).toEqual([{ version: '1.4.2' }]);
    expect(host.runs).toHaveLength(3);
    rollBack.succeed();
    await settled();
    expect(actor.getSnapshot().value).toBe('supervising');
    expect(actor.getSnapshot().context).toMatchObject({ attempts: 1, rolledBack: true });
    expect(host.runs).toHaveLength(4);
  });

  it('halts rather than roll back a second time: the machine is the problem, not the binary', () => {
    const { actor, host, rollBack } = launch({ knownGood: '1.4.2', rolledBack: true, attempts: 3 });
    expect(actor.getSnapshot().value).toBe('halted');
    expect(actor.getSnapshot().context).toMatchObject({ halted: true, haltReason: 'rolled-back-already', attempts: 0 });
    expect(rollBack.runs).toEqual([]);
    expect(host.runs).toEqual([]);
  });

  it('halts when the starts pass the limit and no known-good version was ever recorded', () => {
    const { actor, rollBack } = launch({ attempts: 3 });
    expect(actor.getSnapshot().value).toBe('halted');
    expect(actor.getSnapshot().context.haltReason).toBe('nothing-to-roll-back-to');
    expect(rollBack.runs).toEqual([]);
  });

  it('halts when the package manager cannot reinstall known-good', async () => {
    const { actor, host, rollBack } = launch({ knownGood: '1.4.2', attempts: 3 });
    rollBack.fail('apk exited with status 1');
    await settled();
    expect(actor.getSnapshot().value).toBe('halted');
    expect(actor.getSnapshot().context).toMatchObject({ haltReason: 'roll-back-failed', rolledBack: false });
    expect(host.runs).toEqual([]);
  });

  it('says it is halted on every run the init makes, counting nothing and starting nothing', () => {
    const { actor, host } = launch({ halted: true, haltReason: 'rolled-back-already', attempts: 0 });
    expect(actor.getSnapshot().value).toBe('halted');
    actor.send({ type: 'init.restarted' });
    actor.send({ type: 'init.restarted' });
    expect(actor.getSnapshot().value).toBe('halted');
    expect(actor.getSnapshot().context.attempts).toBe(0);
    expect(host.runs).toEqual([]);
  });

  it('starts the host with a fresh count once a person has removed the halt file and the init runs it again', () => {
    const { actor, host } = launch({ halted: true, haltReason: 'nothing-to-roll-back-to' });
    actor.send({ type: 'operator.unhalt' });
    expect(actor.getSnapshot().value).toBe('cleared');
    expect(host.runs).toEqual([]);
    actor.send({ type: 'init.restarted' });
    expect(actor.getSnapshot().value).toBe('supervising');
    expect(actor.getSnapshot().context.attempts).toBe(1);
    expect(host.runs).toHaveLength(1);
  });

  it('forgets the count and the roll back once the host completes a reconcile, and records the version as known-good', () => {
    const { actor } = launch({ knownGood: '1.4.1', rolledBack: true, attempts: 2 });
    expect(actor.getSnapshot().context.attempts).toBe(3);
    actor.send({ type: 'host.reconciled', version: '1.4.2' });
    expect(actor.getSnapshot().value).toBe('supervising');
    expect(actor.getSnapshot().context).toMatchObject({ attempts: 0, rolledBack: false, knownGood: '1.4.2' });
  });

  it('stops for good on a stop signal: the host is not started again', async () => {
    const { actor, host } = launch();
    actor.send({ type: 'operator.stop' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().value).toBe('stopped');
    await settled();
    expect(host.runs).toHaveLength(1);
  });

  it('takes the limit from its input', async () => {
    const { actor, host } = launch({ maxAttempts: 1, knownGood: '1.4.2' });
    host.fail('crashed on start');
    await settled();
    expect(actor.getSnapshot().value).toBe('rollingBack');
  });
});
