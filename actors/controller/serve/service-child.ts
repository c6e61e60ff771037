import { assign, fromPromise, setup } from 'xstate';
import type { LeaseGate } from '../lease/lease-gate';
import type { ControllerService, RunningService, ServiceLedger } from './service-ledger';

/**
 * A service as a child of the supervision tree: a small machine whose state the tree shows
 * (`waitingForLease`, `starting`, `running`). A service that acts waits for the lease first; a
 * restarted one waits for its previous incarnation to have stopped. A failure while starting or
 * running ends the machine in error, which its slot counts and restarts after a backoff; a stop
 * by the slot stops the service's work through the ledger.
 */
export function serviceChild(service: ControllerService, deps: { gate: LeaseGate; ledger: ServiceLedger }) {
  const { gate, ledger } = deps;
  return setup({
    types: { context: {} as { running: RunningService | undefined } },
    actors: {
      waitForLease: fromPromise<void>(({ signal }) => gate.whenHeld(signal)),
      start: fromPromise<RunningService>(({ signal }) =>
        ledger.starting(
          (async () => {
            await ledger.previousStopped(service.id);
            const running = await service.start(signal);
            if (signal.aborted) {
              await running.stop();
              throw new Error(`${service.id} was stopped while it started`);
            }
            return running;
          })(),
        )),
      run: fromPromise<never, RunningService>(({ input, signal }) => ledger.run(service.id, input, signal)),
    },
  }).createMachine({
    id: service.id,
    context: { running: undefined },
    initial: service.needsLease ? 'waitingForLease' : 'starting',
    states: {
      /** Standing by: this service acts, so it starts only once this controller holds the lease. */
      waitingForLease: {
        invoke: { id: 'lease', src: 'waitForLease', onDone: { target: 'starting' } },
      },
      /** Starting the service's work. */
      starting: {
        invoke: {
          id: 'start',
          src: 'start',
          onDone: { target: 'running', actions: assign({ running: ({ event }) => event.output }) },
        },
      },
      /** The service runs until it fails or is stopped. */
      running: {
        invoke: {
          id: 'run',
          src: 'run',
          input: ({ context }) => context.running as RunningService,
        },
      },
    },
  });
}
