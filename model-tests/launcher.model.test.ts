/**
 * The launcher machine's paths, walked by the real launcher script
 * (launcher/nox-mesh-host-launch) under a real POSIX shell, with its state directory in a
 * temporary folder. What it runs is the only thing stubbed, as the seed asks: the package
 * manager is the stub that records its calls (launcher/testing/stub-package-manager, called
 * `apk` here), and the host it starts is the stub that runs until told (running-host), which
 * the stub package manager installs as version 1.4.2.
 *
 * The script goes round on its own, so every step is held at a point where the real script
 * waits: the stub host runs until the test tells it to exit 0 (`host.done`) or 1
 * (`host.error`), or to do what a host does when it completes a reconcile (`host.reconciled`);
 * the stub package manager records its call and waits until the test lets it succeed
 * (`rollBack.done`) or fail (`rollBack.error`). A driver acts, then waits until the script has
 * come to rest: a new host started, a new package manager call, or the launcher exited. The
 * init is played by the test: `init.restarted` runs the script again, `operator.stop` is the
 * SIGTERM of `systemctl stop`, and `operator.unhalt` removes the halt file as a person would.
 *
 * The assertions read the files the script wrote (the counter, known-good, the rolled-back
 * marker, the halt file), the calls the stub package manager recorded, the starts and signals
 * the stub hosts recorded, which processes are alive and how the launcher exited.
 */
import { describeModel, doneEvent, errorEvent } from './harness';
import { launcherMachine } from '../machines/launcher.machine';
import type { LauncherContext } from '../machines/launcher.machine';
import { EXIT, LauncherRig } from '../launcher/testing/launcher-rig';

const VERSION = '1.4.2';
const MAX_ATTEMPTS = 2;
const HALTED_AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

interface System {
  rig: LauncherRig;
  /** Host starts the model says have happened, on every launcher run so far. */
  starts: number;
  /** Package manager calls the model says have happened. */
  rollBacks: number;
}

/** What has happened so far, as the script and the stubs recorded it. */
async function progress(rig: LauncherRig): Promise<string> {
  const starts = (await rig.hostStarts()).length;
  const calls = (await rig.packageManagerCalls()).length;
  const exited = rig.runs.filter((run) => run.exit !== null).length;
  return `${starts} starts, ${calls} package manager calls, ${exited} launcher runs exited`;
}

/**
 * Does `act`, then waits until the script has come to rest again: it started a host, called
 * the package manager, or exited. Which one is for the state assertions to judge.
 */
async function actAndSettle(system: System, to: { value: unknown }, act: () => Promise<void> | void): Promise<void> {
  const { rig } = system;
  const before = await progress(rig);
  await act();
  await rig.waitFor(`the launcher to come to rest after ${before}`, async () => ((await progress(rig)) === before ? undefined : true));
  if (to.value === 'supervising') system.starts += 1;
  if (to.value === 'rollingBack') system.rollBacks += 1;
}

/** The launcher's files agree with the model's context. */
async function expectFiles(rig: LauncherRig, context: LauncherContext, halted: boolean): Promise<void> {
  const files = await rig.files();
  expect(files.attempts).toBe(context.attempts);
  expect(files.knownGood).toBe(context.knownGood ?? null);
  expect(files.rolledBack).toBe(context.rolledBack ? context.knownGood : null);
  if (halted) {
    expect(files.halted).toEqual({ reason: context.haltReason, detail: expect.any(String), halted_at: expect.stringMatching(HALTED_AT) });
  } else {
    expect(files.halted).toBeNull();
  }
}

/** The host was started, and the package manager called, exactly as often as the model says. */
async function expectHistory(system: System): Promise<void> {
  const { rig } = system;
  const starts = await rig.hostStarts();
  expect(starts).toHaveLength(system.starts);
  for (const start of starts) expect(start).toEqual({ pid: expect.any(Number), version: VERSION, args: ['run', '--state-dir', rig.stateDir] });
  // The first call is the install of the host in setup; every later one a roll back to known-good.
  const calls = await rig.packageManagerCalls();
  expect(calls).toEqual(Array.from({ length: 1 + system.rollBacks }, () => `apk add nox-mesh-host=${VERSION}`));
}

/** No host is running, and no launcher run is either. */
async function expectNothingRunning(rig: LauncherRig): Promise<void> {
  for (const start of await rig.hostStarts()) expect(LauncherRig.alive(start.pid)).toBe(false);
  expect(rig.runs.every((run) => run.exit !== null)).toBe(true);
}

// Halt reasons are fixed by the counter, the marker and known-good whenever the launcher is
// halted, and matter nowhere else, so snapshots differing only in an old reason are one vertex.
function serializeState(snapshot: { value: unknown; context: LauncherContext }): string {
  const { value, context } = snapshot;
  return JSON.stringify([value, context.attempts, context.rolledBack, context.knownGood, context.halted]);
}

const transient = (name: string) => () => {
  throw new Error(`${name} decides at once and moves on: the launcher never rests there`);
};

describeModel({
  machine: launcherMachine,
  input: { maxAttempts: MAX_ATTEMPTS },
  serializeState,
  // Every transition path already walks each transition from each kind of snapshot; the
  // simple paths add only reorderings of host exits, at a real process or two per step.
  simplePaths: false,
  async setup(): Promise<System> {
    const rig = await LauncherRig.create({ maxAttempts: MAX_ATTEMPTS, packageManager: 'apk' });
    await rig.publish(VERSION, 'runs');
    rig.installWithPackageManager(VERSION);
    await rig.holdPackageManager(true);
    const system: System = { rig, starts: 0, rollBacks: 0 };
    // The init starts the launcher on a freshly installed machine: nothing in the state dir.
    await actAndSettle(system, { value: 'supervising' }, () => { rig.start(); });
    return system;
  },
  async teardown({ rig }) {
    await rig.dispose();
  },
  events: {
    'host.reconciled': {
      samples: [{ type: 'host.reconciled', version: VERSION }],
      async drive({ rig }) {
        const done = (await rig.hostReconciles()).length;
        await rig.tellHost('reconcile');
        await rig.waitFor('the host to complete a reconcile', async () => ((await rig.hostReconciles()).length > done ? true : undefined));
      },
    },
    'operator.stop': {
      async drive({ rig }) {
        rig.run!.signal('SIGTERM');
        await rig.run!.waitForExit();
      },
    },
    'init.restarted': {
      async drive(system, _event, step) {
        await actAndSettle(system, step.to, () => { system.rig.start(); });
      },
    },
    'operator.unhalt': {
      async drive({ rig }) {
        await rig.removeLaunchFile('halted');
      },
    },
    'xstate.done.actor.host': {
      samples: [doneEvent('host', undefined)],
      async drive(system, _event, step) {
        await actAndSettle(system, step.to, () => system.rig.tellHost('exit 0'));
      },
    },
    'xstate.error.actor.host': {
      samples: { 'exit 1': errorEvent('host', new Error('the host exited with status 1')) },
      async drive(system, _event, step) {
        await actAndSettle(system, step.to, () => system.rig.tellHost('exit 1'));
      },
    },
    'xstate.done.actor.rollBack': {
      samples: [doneEvent('rollBack', undefined)],
      async drive(system, _event, step) {
        await actAndSettle(system, step.to, () => system.rig.releasePackageManager('ok'));
      },
    },
    'xstate.error.actor.rollBack': {
      samples: { 'package manager failed': errorEvent('rollBack', new Error('apk exited with status 1')) },
      async drive(system, _event, step) {
        await actAndSettle(system, step.to, () => system.rig.releasePackageManager('fail'));
      },
    },
  },
  states: {
    checkingHalt: transient('checkingHalt'),
    counting: transient('counting'),
    deciding: transient('deciding'),
    async supervising(system, snapshot) {
      const { rig } = system;
      expect(rig.run!.exit).toBeNull();
      await expectFiles(rig, snapshot.context, false);
      await expectHistory(system);
      // One host, the latest, is running, and the launcher is waiting for it.
      const starts = await rig.hostStarts();
      expect(starts.map((start) => LauncherRig.alive(start.pid))).toEqual(starts.map((_, index) => index === starts.length - 1));
    },
    async rollingBack(system, snapshot) {
      const { rig } = system;
      expect(rig.run!.exit).toBeNull();
      await expectFiles(rig, snapshot.context, false);
      await expectHistory(system);
      // The package manager was called with known-good after the last host had gone.
      for (const start of await rig.hostStarts()) expect(LauncherRig.alive(start.pid)).toBe(false);
      expect(rig.run!.stderr).toContain(`rolling back to ${snapshot.context.knownGood} with apk`);
    },
    async halted(system, snapshot) {
      const { rig } = system;
      expect(rig.run!.exit).toEqual({ code: EXIT.halted, signal: null });
      await expectFiles(rig, snapshot.context, true);
      await expectHistory(system);
      await expectNothingRunning(rig);
      // It says so, and names what a person does next.
      const halted = `${rig.launchDir}/halted`;
      expect(rig.run!.stderr).toMatch(/^nox-mesh-host-launch: halted/m);
      expect(rig.run!.stderr).toContain(`remove ${halted}`);
    },
    async cleared(system, snapshot) {
      const { rig } = system;
      expect(rig.run!.exit).toEqual({ code: EXIT.halted, signal: null });
      await expectFiles(rig, snapshot.context, false);
      await expectHistory(system);
      await expectNothingRunning(rig);
    },
    async stopped(system, snapshot) {
      const { rig } = system;
      expect(rig.run!.exit).toEqual({ code: EXIT.stopped, signal: null });
      await expectFiles(rig, snapshot.context, false);
      // The host was passed the stop, and nothing was started after it.
      const starts = await rig.hostStarts();
      expect(await rig.hostSignals()).toEqual([`${starts[starts.length - 1].pid} TERM`]);
      await expectHistory(system);
      await expectNothingRunning(rig);
      expect(rig.run!.stderr).toMatch(/stopped by SIGTERM; the host exited with status 0\n$/);
    },
  },
});
