import { fromCallback, fromPromise } from 'xstate';
import { leaseMachine, type GateParams, type LeaseRenewed, type LeaseTaken } from '../../../machines/lease.machine';
import type { ControllerLog } from '../logs/log-fields';
import type { LeaseOperations } from './kv-lease';
import { LeaseLost } from './lease-errors';
import type { LeaseGate } from './lease-gate';

/** What the lease actor calls: the bucket, the gate it opens and closes, and who hears a loss. */
export interface LeaseDeps {
  lease: LeaseOperations;
  gate: LeaseGate;
  /** Told once when a renewal was refused: the process must stop acting and exit. */
  onLost(error: LeaseLost): void;
  log: ControllerLog;
}

/**
 * The lease machine with the bucket behind it: take, renew and give back through `lease`, the
 * gate opened at each successful write with its deadline and closed on leaving `holding`, a
 * standby woken by the key being deleted, and a refused renewal reported through `onLost`.
 * Logs when the lease is taken, when it is someone else's (once per holder, not every attempt),
 * when a renewal could not reach the broker, and when it is given back or lost.
 */
export function leaseLogic(deps: LeaseDeps) {
  let lastRival: string | undefined;
  let holding = false;
  return leaseMachine.provide({
    actors: {
      take: fromPromise<LeaseTaken, void>(({ signal }) => deps.lease.take(signal)),
      renew: fromPromise<LeaseRenewed, { revision: number }>(async ({ input }) => {
        try {
          return await deps.lease.renew(input.revision);
        } catch (error) {
          deps.log(`lease: ${(error as Error)?.message ?? String(error)}`, { level: 'warn' });
          if ((error as { refused?: boolean }).refused !== true) deps.gate.note(`the last renewal failed: ${(error as Error)?.message ?? String(error)}`);
          throw error;
        }
      }),
      release: fromPromise<void, { revision: number }>(async ({ input }) => {
        await deps.lease.release(input.revision);
        deps.log(`lease: given back (revision ${input.revision})`, { revision: input.revision });
      }),
      watchHolder: fromCallback(({ sendBack }) => deps.lease.watchFreed(() => sendBack({ type: 'lease.freed' }))),
    },
    actions: {
      openGate: (_, params: GateParams) => {
        deps.gate.open(params);
        if (!holding) deps.log(`lease: taken at epoch ${params.epoch}`, { epoch: params.epoch });
        holding = true;
        lastRival = undefined;
      },
      closeGate: () => {
        deps.gate.close();
        holding = false;
      },
      noteRival: (_, params: { reason: string }) => {
        deps.gate.note(params.reason);
        if (params.reason !== lastRival) deps.log(`lease: standing by: ${params.reason}`, { level: 'info' });
        lastRival = params.reason;
      },
      noteForeign: (_, params: { reason: string; epoch: number | null }) => {
        deps.gate.note(params.reason);
        deps.log(`lease: lost under epoch ${params.epoch ?? 'none'}: ${params.reason}; standing by`, { level: 'warn', epoch: params.epoch });
        lastRival = params.reason;
      },
      announceLoss: (_, params: { reason: string; epoch: number | null }) => {
        const error = new LeaseLost(params.epoch, params.reason);
        deps.gate.end('lost', error.message);
        deps.log(`lease: ${error.message}: ${params.reason}`, { level: 'error', epoch: params.epoch });
        deps.onLost(error);
      },
    },
  });
}
