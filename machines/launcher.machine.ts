import { and, assertEvent, assign, fromPromise, not, setup } from 'xstate';

// The launcher's policy: what launcher/nox-mesh-host-launch (POSIX sh, started by the init)
// does each time it is about to start the host. The script is the real thing; this machine is
// its specification, and model-tests/launcher.model.test.ts drives the script along every path
// generated from it.
//
//   init ──► nox-mesh-host-launch ──► nox-mesh-host
//                ├─ halted?                           say so and stop; a person has to look
//                ├─ count this start attempt
//                ├─ too many, not yet rolled back?    roll back, then start
//                ├─ too many, already rolled back?    halt: the machine is the problem
//                └─ otherwise                         start the host, and supervise it
//
// Every count lives in files under <state-dir>/launch/ (launcher/README.md), because a host
// that will not start may take the launcher and the whole machine down with it, and the count
// must survive that. The context mirrors those files.
//
// The launcher supervises the host rather than exec'ing it: when the host exits, for whatever
// reason, the launcher goes round again, counting the new start. An exit 0 is how the host
// restarts onto a binary it has just installed; a crash is a failed start. Both go round; the
// count tells them apart, because the host clears it (and writes `known-good`) each time it
// completes a reconcile (`host.reconciled`), so only starts that never got that far add up.
//
// The init is part of the picture in one place. A halted launcher exits, and the init (systemd
// `Restart=always`, OpenRC's supervise-daemon) runs it again a few seconds later, when it says
// it is halted and exits again. That re-run (`init.restarted`) and a person removing the halt
// file (`operator.unhalt`) are modelled so that "halted? say so and stop", and the way out of
// it, are paths like any other. A launcher stopped on request (`operator.stop`) is stopped:
// the init does not run it again until it is asked to start it.

/** Starts allowed before the launcher acts (rolls back, or halts): the script's default too. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * Why a launcher halted, as recorded in the halt file's `reason=` line:
 * `rolled-back-already` (the version it rolled back to fails too: the machine is the problem),
 * `nothing-to-roll-back-to` (no `known-good` recorded yet), `roll-back-failed` (the package
 * manager could not reinstall the known-good version).
 */
export type HaltReason = 'rolled-back-already' | 'nothing-to-roll-back-to' | 'roll-back-failed';

/** What the launcher finds in its state directory when the init first starts it. */
export interface LauncherInput {
  /** `MESH_LAUNCH_MAX_ATTEMPTS`: starts allowed before acting (default 3). */
  maxAttempts?: number;
  /** The `attempts` counter (default 0: none counted, or cleared by the host). */
  attempts?: number;
  /** The `rolled-back` marker is present (default false). */
  rolledBack?: boolean;
  /** The version in `known-good`, if any. */
  knownGood?: string;
  /** The `halted` file is present (default false). */
  halted?: boolean;
  /** Its `reason=`, when it is. */
  haltReason?: HaltReason;
}

/** What the launcher remembers: the files under <state-dir>/launch/ and its one setting. */
export interface LauncherContext {
  maxAttempts: number;
  /** Starts counted since the host last completed a reconcile (or since the launcher reset it). */
  attempts: number;
  /** The launcher has rolled back, and no host has completed a reconcile since. */
  rolledBack: boolean;
  /** The version the host was running when it last completed a reconcile; undefined before. */
  knownGood: string | undefined;
  /** The halt file is present. */
  halted: boolean;
  /** Why it halted; kept after the halt file is removed, for the record. */
  haltReason: HaltReason | undefined;
}

/**
 * Events the launcher's world produces. The outcomes of its work arrive as
 * `xstate.done.actor.host` (the host exited 0), `xstate.error.actor.host` (it exited non-zero
 * or could not run), `xstate.done.actor.rollBack` and `xstate.error.actor.rollBack`.
 */
export type LauncherEvent =
  /**
   * The host completed a reconcile: it wrote the version it runs to `known-good`, cleared the
   * counter and removed the `rolled-back` marker (that version has now proved itself).
   */
  | { type: 'host.reconciled'; version: string }
  /** SIGTERM or SIGINT to the launcher (`systemctl stop`, `rc-service … stop`). */
  | { type: 'operator.stop' }
  /** The init ran the launcher again after it exited halted. */
  | { type: 'init.restarted' }
  /** A person looked at the machine and removed the halt file. */
  | { type: 'operator.unhalt' };

/** What the `rollBack` actor is given: the version to reinstall. */
export interface RollBackInput {
  version: string;
}

/**
 * The launcher's policy. The script does its work; an actor that wanted to run this machine
 * would provide `host` (run the host until it exits) and `rollBack` (reinstall a version with
 * the system's package manager) with `launcherMachine.provide({ actors: { host, rollBack } })`.
 */
export const launcherMachine = setup({
  types: {
    context: {} as LauncherContext,
    events: {} as LauncherEvent,
    input: {} as LauncherInput,
  },
  actors: {
    host: fromPromise<void>(async () => {
      throw new Error('launcher: provide the host actor with launcherMachine.provide({ actors: { host } })');
    }),
    rollBack: fromPromise<void, RollBackInput>(async () => {
      throw new Error('launcher: provide the rollBack actor with launcherMachine.provide({ actors: { rollBack } })');
    }),
  },
  guards: {
    isHalted: ({ context }) => context.halted,
    hasTooManyAttempts: ({ context }) => context.attempts > context.maxAttempts,
    hasRolledBack: ({ context }) => context.rolledBack,
    hasKnownGood: ({ context }) => context.knownGood !== undefined,
  },
  actions: {
    countAttempt: assign({ attempts: ({ context }) => context.attempts + 1 }),
    // The counter is reset before the marker is written: a launcher killed in between rolls
    // back once more rather than halting a version that never got its starts.
    recordRolledBack: assign({ attempts: 0, rolledBack: true }),
    // The counter is reset when halting so that a person who removes the halt file gives the
    // host a fresh set of starts instead of an immediate second halt.
    haltBecause: assign((_, params: { reason: HaltReason }) => ({ attempts: 0, halted: true, haltReason: params.reason })),
    recordReconcile: assign(({ event }) => {
      assertEvent(event, 'host.reconciled');
      return { attempts: 0, rolledBack: false, knownGood: event.version };
    }),
    clearHalt: assign({ halted: false }),
  },
}).createMachine({
  id: 'launcher',
  description: 'What the init starts instead of the host: counts starts, rolls back once, halts for a person.',
  initial: 'checkingHalt',
  context: ({ input }) => ({
    maxAttempts: input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    attempts: input.attempts ?? 0,
    rolledBack: input.rolledBack ?? false,
    knownGood: input.knownGood,
    halted: input.halted ?? false,
    haltReason: input.haltReason,
  }),
  states: {
    // Checked at the top of every round, not only when the init starts the launcher.
    checkingHalt: {
      description: 'Looks for the halt file. Present: says why, and that a person has to look, and exits without counting or starting anything.',
      always: [
        { guard: 'isHalted', target: 'halted' },
        { target: 'counting' },
      ],
    },
    // Counted before the host runs, so a host that takes the machine down still counts.
    counting: {
      description: 'Adds one to the attempts counter on disk (written atomically) before anything is started.',
      entry: 'countAttempt',
      always: { target: 'deciding' },
    },
    deciding: {
      description: 'Compares the count with the limit. Within it: start the host. Over it: roll back once to known-good, or halt when that was done already or there is nothing to roll back to.',
      always: [
        { guard: and(['hasTooManyAttempts', 'hasRolledBack']), target: 'halted', actions: { type: 'haltBecause', params: { reason: 'rolled-back-already' } } },
        { guard: and(['hasTooManyAttempts', not('hasKnownGood')]), target: 'halted', actions: { type: 'haltBecause', params: { reason: 'nothing-to-roll-back-to' } } },
        { guard: 'hasTooManyAttempts', target: 'rollingBack' },
        { target: 'supervising' },
      ],
    },
    // The package manager runs in the foreground; a stop asked for meanwhile is honoured once
    // it has finished, so a package install is never cut in half.
    rollingBack: {
      description: 'Reinstalls the version in known-good with the system\'s package manager (apk, pacman or apt-get). Done: resets the counter, records rolled-back, goes round again. Failed: halts.',
      invoke: {
        id: 'rollBack',
        src: 'rollBack',
        input: ({ context }) => ({ version: context.knownGood ?? '' }),
        onDone: { target: 'checkingHalt', actions: 'recordRolledBack' },
        onError: { target: 'halted', actions: { type: 'haltBecause', params: { reason: 'roll-back-failed' } } },
      },
    },
    // Supervised, not exec'd: the launcher outlives the host so that an exit 0 (a restart
    // onto a new binary) needs nothing from the init.
    supervising: {
      description: 'Runs `nox-mesh-host run` as its child, passing its output through, and waits. Any exit goes round again; a stop signal is passed on and ends the launcher.',
      invoke: {
        id: 'host',
        src: 'host',
        onDone: { target: 'checkingHalt' },
        onError: { target: 'checkingHalt' },
      },
      on: {
        'host.reconciled': { actions: 'recordReconcile' },
        'operator.stop': { target: 'stopped' },
      },
    },
    // Exiting (status 3) rather than sleeping keeps the failure visible to the init: the unit
    // shows it, and each re-run says again why it will not start.
    halted: {
      description: 'The halt file holds the reason; the launcher has exited with status 3 without starting the host. The init runs it again and it says so again, until a person removes the file.',
      on: {
        'init.restarted': { target: 'checkingHalt' },
        'operator.unhalt': { target: 'cleared', actions: 'clearHalt' },
      },
    },
    cleared: {
      description: 'A person removed the halt file. The launcher is not running; the next time the init runs it, it counts afresh and starts the host.',
      on: {
        'init.restarted': { target: 'checkingHalt' },
      },
    },
    stopped: {
      description: 'Stopped on request: the host was sent SIGTERM, and the launcher exited 0 once the host had, without starting it again.',
      type: 'final',
    },
  },
});
