import { createActor, fromPromise, waitFor, type SnapshotFrom } from 'xstate';
import { lifecycleMachine, type EnrolInput, type LifecycleContext, type LifecycleIdentity } from '../../../machines/lifecycle.machine';
import type { Enrolled } from './enrol';
import { EnrolStatus } from './enrol-status';
import { stateText } from '../../shared/supervisor/describe-tree';

/** What the enrol process's lifecycle actor works with. */
export interface EnrolLifecycleOptions {
  /** The state directory whose status file says what this machine is doing. */
  stateDir: string;
  /**
   * The enrolment itself, given the token as the person typed it (actors/host/enrolment/enrol.ts
   * over the opened host): it resolves once the identity is stored and the store let go.
   */
  enrol(token: string): Promise<Enrolled>;
  /** The status file could not be written: the enrolment goes on, and the person is told. */
  statusFailed?(error: unknown): void;
}

/** The lifecycle machine as `nox-mesh-host enrol` provides it: only `enrol` does any work here. */
export type EnrolLifecycleLogic = ReturnType<typeof enrolLifecycleLogic>;

/**
 * The lifecycle machine with the enrolment as its `enrol` actor. In this process there is no
 * store watch (`identity`: this process is the one that puts an identity there) and no node's
 * work (`node`: `nox-mesh-host run` runs it once the identity is stored), so both keep the
 * machine's inert placeholders.
 */
export function enrolLifecycleLogic(enrolWork: (token: string) => Promise<LifecycleIdentity>) {
  return lifecycleMachine.provide({
    actors: {
      enrol: fromPromise<LifecycleIdentity, EnrolInput>(({ input }) => enrolWork(input.token)),
    },
  });
}

// A machine that is not a node: no identity, nothing refused yet, no release.
const HOSTED_CONTEXT: LifecycleContext = { identity: null, enrolRefusal: null, releaseFailure: null, releaseAttempts: 0, finalDeclarationHeld: false };

/**
 * `nox-mesh-host enrol` as the node lifecycle: an actor of the lifecycle machine starts where
 * this machine is, `hosted` (an identity already in the store is one this enrolment replaces:
 * it was revoked when the token was issued), is sent the person's `operator.enrol`, and in
 * `enrolling` runs the enrolment. It ends in `enrolled`, and the Enrolled record is returned;
 * or back in `hosted` with the refusal, and the enrolment's own error is thrown as it was, so
 * the command says and exits as it always did. Either way the actor is stopped here: the node's
 * life goes on in `nox-mesh-host run`.
 *
 * Each state the actor takes is written to the status file (enrol-status.ts), so
 * `nox-mesh-host status` says `enrolling` while the enrolment waits on the broker.
 */
export async function enrolThroughLifecycle(token: string, options: EnrolLifecycleOptions): Promise<Enrolled> {
  let enrolled: Enrolled | undefined;
  let failure: { error: unknown } | undefined;
  const logic = enrolLifecycleLogic(async (given) => {
    try {
      enrolled = await options.enrol(given);
      return { node: enrolled.node };
    } catch (error) {
      // The machine keeps the refusal as plain data; the command needs the error itself.
      failure = { error };
      throw error;
    }
  });
  const status = await EnrolStatus.begin(options.stateDir, options.statusFailed);
  const actor = createActor(logic, { input: {}, snapshot: logic.resolveState({ value: 'hosted', context: HOSTED_CONTEXT }) });
  const seen = actor.subscribe((snapshot) => status.show(stateText(snapshot.value), snapshot.context.identity?.node ?? null));
  // A person who stops the enrolment (Ctrl-C, or the service manager) would leave `enrolling`
  // behind, which a hosted `run` never writes over: the file is put back first, then the signal
  // ends the process as it would have.
  const interrupted = (signal: NodeJS.Signals): void => {
    void status.refused().finally(() => {
      stopListening();
      process.kill(process.pid, signal);
    });
  };
  const stopListening = (): void => {
    for (const signal of STOP_SIGNALS) process.off(signal, interrupted);
  };
  for (const signal of STOP_SIGNALS) process.once(signal, interrupted);
  actor.start();
  try {
    actor.send({ type: 'operator.enrol', token });
    const end = await waitFor(actor, (snapshot) => ended(snapshot));
    if (end.matches('enrolled') && enrolled !== undefined) {
      await status.enrolled(enrolled.node);
      return enrolled;
    }
    await status.refused();
    throw failure?.error ?? new Error(`lifecycle: the enrolment ended in ${stateText(end.value)} without an outcome`);
  } finally {
    stopListening();
    seen.unsubscribe();
    actor.stop();
    await status.flushed();
  }
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

// The enrolment's work is done once the machine has left `enrolling`, either way.
function ended(snapshot: SnapshotFrom<EnrolLifecycleLogic>): boolean {
  return snapshot.matches('enrolled') || (snapshot.matches('hosted') && snapshot.context.enrolRefusal !== null);
}

