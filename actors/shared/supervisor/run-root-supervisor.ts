import { createActor, type Actor, type ActorOptions, type AnyActorLogic } from 'xstate';
import { failureMessage, isEscalationReport, type SupervisorOutput } from '../../../machines/supervisor.machine';
import { describeTree, type SupervisionTreeNode } from './describe-tree';
import { supervisorSpecOf, type SupervisorLogic } from './supervise';
import { SupervisorEscalated } from './supervisor-escalated';
import { SupervisorFailed } from './supervisor-failed';

/** How the process ends when the root gives up: an exit status and the text for stderr. */
export type ExitProcess = (code: number, message: string) => void;

/** What the composition root passes in; tests replace the clock and the exit. */
export interface RootSupervisorOptions {
  /** Called once the tree has stopped after an escalation, before `exit`; awaited (close the bus, give back a lease). */
  onEscalate?: (escalation: SupervisorEscalated) => void | Promise<void>;
  /** Ends the process. Default: write the message to stderr and `process.exit(code)`. */
  exit?: ExitProcess;
  /** The actor system's clock; a SimulatedClock in tests. */
  clock?: ActorOptions<AnyActorLogic>['clock'];
  /** Input for the root supervisor (its retained map, if the caller keeps one). */
  input?: unknown;
}

/** How the root ended: like any supervisor, or `failed` when the root itself broke (a bug). */
export type RootOutcome = SupervisorOutput | { outcome: 'failed'; child: string; error: string };

/** A running root supervisor. */
export interface RootSupervisor {
  readonly actor: Actor<SupervisorLogic>;
  /**
   * Resolves when the tree has ended; after an escalation or a failure, once `exit` was called.
   * Rejects only when `onEscalate` throws (and then `exit` has still been called).
   */
  readonly done: Promise<RootOutcome>;
  /** Stops every child cleanly; resolves once the tree has ended. */
  stop(): Promise<RootOutcome>;
  /** The live tree, for `mesh-control tree` and the host's status. */
  tree(): SupervisionTreeNode;
}

/** Writes the message to stderr and exits with the code: what a process does when its root gives up. */
export const exitProcess: ExitProcess = (code, message) => {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(code);
};

/**
 * Starts a supervision tree as the root of the process. If the root supervisor gives up, every
 * child has already been stopped (reaching its final state stops them, so their cleanup runs);
 * then `onEscalate` runs and `exit(1, text)` is called with a message naming the child and its
 * last error. A root that itself fails (a bug in the tree) exits non-zero too.
 */
export function runRootSupervisor(logic: SupervisorLogic, options: RootSupervisorOptions = {}): RootSupervisor {
  const exit = options.exit ?? exitProcess;
  const name = supervisorSpecOf(logic)?.name ?? logic.id;
  // Only a given clock is passed: `clock: undefined` would replace XState's own clock.
  const actor = createActor(logic, { ...(options.clock === undefined ? {} : { clock: options.clock }), input: options.input });

  const done = new Promise<RootOutcome>((resolve, reject) => {
    const giveUp = async (error: SupervisorEscalated | SupervisorFailed): Promise<void> => {
      try {
        if (error instanceof SupervisorEscalated) await options.onEscalate?.(error);
      } finally {
        exit(error.exitCode, error.toText());
      }
    };
    actor.subscribe({
      complete: () => {
        // An actor stopped from outside (actor.stop()) completes without output: that is a stop too.
        const output = (actor.getSnapshot().output as SupervisorOutput | undefined) ?? { outcome: 'stopped', child: name };
        if (!isEscalationReport(output)) {
          resolve(output);
          return;
        }
        giveUp(new SupervisorEscalated(name, output)).then(() => resolve(output), reject);
      },
      error: (error) => {
        // The tree itself broke (a bug): its children were stopped with it, so the process goes too.
        giveUp(new SupervisorFailed(name, error)).then(() => resolve({ outcome: 'failed', child: name, error: failureMessage(error) }), reject);
      },
    });
  });

  actor.start();
  return {
    actor,
    done,
    stop: () => {
      actor.send({ type: 'supervisor.stop' });
      return done;
    },
    tree: () => describeTree(actor),
  };
}
