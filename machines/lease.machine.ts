import { assign, fromCallback, fromPromise, setup } from 'xstate';

// One acting controller: the lease. Several controllers may serve one mesh; the one holding the
// key `holder` of the broker's KV bucket `mesh-controller_lease` acts (sends declarations, writes
// plans), the others stand by and try to take it.
//
// The key is written with compare-and-set: taken by creating it (refused when it exists), renewed
// by updating it at the revision last written (refused when anyone else wrote it since). The
// bucket's age limit (15 s) removes a key nobody renews, so a holder that died frees it on its
// own; a holder that stops deletes it, so a standby can take it at once.
//
// The epoch is the revision the key was taken at. Revisions only grow while the bucket lives;
// the store keeps the highest epoch ever acted under as a floor, and the take refuses to act
// under an epoch at or below it (the actor compacts a bucket raised from nothing past the floor
// first). So every holder acts under a higher epoch than every holder before it, and a host that
// has seen an epoch refuses declarations from lower ones: a holder that lost the lease without
// knowing it cannot undo what its successor sent.
//
// The gate is the clock, not this machine: a holder acts only while its local monotonic clock is
// `ttl - margin` (12 s) short of the last successful write's send time plus the age limit. The
// broker measures the age from when it stored the write, which is never before it was sent, so
// the holder stops acting at least `margin` (3 s) before any other controller can take the key,
// whatever happens to the renewals in between. The machine carries that deadline
// (`actingUntil`, in the actor's clock) from the outcomes of the take and each renewal and hands
// it to the gate; it never reads a clock itself.
//
// A renewal that cannot reach the broker is retried and is not a loss: the gate closes on its
// own, and when the broker answers again the renewal either succeeds (nobody else wrote the key,
// so this controller still holds it) or is refused. A refused renewal is a loss: the machine
// ends in `lost` and the process exits, so its service manager starts it afresh as a standby.
//
// A renewal that finds in the key a value no controller wrote (`foreign`) is a lost lease too,
// told with that reason, but nobody holds the lease to lose it to: exiting would only restart
// into the same key. The machine closes the gate and stands by (`contending`); the value's age
// limit frees the key, and a take then starts a new, higher epoch.
//
// Every state has at most one timer, so the graph is exact: each path the model tests walk can
// happen in time as drawn.

/** How long things take; the defaults are what a serving controller uses. */
export interface LeaseTimings {
  /** The bucket's age limit: a key not written for this long is gone. */
  ttlMs: number;
  /** How often the holder renews. Must be well below `ttlMs - marginMs`. */
  renewEveryMs: number;
  /** The holder stops acting this long before the key could expire. */
  marginMs: number;
  /** The wait after a renewal that could not reach the broker, before the next attempt. */
  renewRetryMs: number;
  /** How often a controller without the lease tries to take it. */
  contendEveryMs: number;
}

/** Production timings: 15 s age, renewed every 5 s, acting stops 3 s before expiry. */
export const LEASE_TIMINGS: LeaseTimings = {
  ttlMs: 15_000,
  renewEveryMs: 5_000,
  marginMs: 3_000,
  renewRetryMs: 1_000,
  // A standby learns of a key given back at once (a watch); one that expired is noticed by
  // trying, so trying every second makes a failover after a crash take ttl + 1 s at most.
  contendEveryMs: 1_000,
};

/** The take's outcome: the lease is held. */
export interface LeaseTaken {
  /** The revision the key was taken at: the epoch this controller acts under. */
  epoch: number;
  /** The key's revision now, for the next compare-and-set. */
  revision: number;
  /** Until when (actor's monotonic clock, ms) this controller may act, from this write's send time. */
  actingUntil: number;
}

/** A renewal's outcome: the key is still this controller's. */
export interface LeaseRenewed {
  revision: number;
  actingUntil: number;
}

/**
 * What the take, renewal and release throw, as far as the machine looks at it: `refused` when
 * the broker answered that the key is not (or no longer) this controller's; otherwise the broker
 * could not be asked (unreachable, timed out) and nothing is known.
 */
export interface LeaseFailure {
  refused: boolean;
  /** Set when the key holds a value no controller wrote (see the header comment). */
  foreign?: boolean;
  message: string;
}

/** What the lease remembers. */
export interface LeaseContext {
  timings: LeaseTimings;
  /** The epoch acted under while held; null before the first take. */
  epoch: number | null;
  /** The key's revision at this controller's last write; null when not held. */
  revision: number | null;
  /** The deadline the gate holds (actor's clock); 0 when not held. */
  actingUntil: number;
  /** Why the last take or renewal failed (who holds the lease, a timeout…); null after a success. */
  lastError: string | null;
}

/** Input of the lease machine: timings other than the production ones, for tests. */
export interface LeaseInput {
  timings?: Partial<LeaseTimings>;
}

/**
 * Events the lease accepts. Outcomes of its work arrive as `xstate.done.actor.<id>` /
 * `xstate.error.actor.<id>` for `take`, `renew` and `release`, and its waits as
 * `xstate.after.<delay>.<state id>`.
 */
export type LeaseEvent =
  /** The holder deleted the key (a graceful stop): try to take it now rather than at the next attempt. */
  | { type: 'lease.freed' }
  /** The controller is stopping: give the lease back if held, and end. */
  | { type: 'controller.stopping' };

/** The parameters of the gate actions. */
export interface GateParams {
  epoch: number;
  /** The key's revision at the write that opened the gate: what giving it back is done at. */
  revision: number;
  actingUntil: number;
}

function failureText(error: unknown): string {
  if (typeof error === 'object' && error !== null && typeof (error as LeaseFailure).message === 'string') return (error as LeaseFailure).message;
  return String(error);
}

/** True when a failure of the take, renewal or release means the broker said no (see LeaseFailure). */
export function isRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as Partial<LeaseFailure>).refused === true;
}

/** True when a failure says the key holds a value no controller wrote (see LeaseFailure). */
export function isForeign(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as Partial<LeaseFailure>).foreign === true;
}

/**
 * The lease. Provide `take`, `renew`, `release` and `watchHolder` (actors/controller/lease), and
 * the actions `openGate`, `closeGate`, `noteRival`, `noteForeign` and `announceLoss`, with
 * `machine.provide`.
 */
export const leaseMachine = setup({
  types: {
    context: {} as LeaseContext,
    events: {} as LeaseEvent,
    input: {} as LeaseInput | undefined,
  },
  actors: {
    take: fromPromise<LeaseTaken, void>(async () => {
      throw new Error('leaseMachine: provide the `take` actor with machine.provide({ actors: { take } })');
    }),
    renew: fromPromise<LeaseRenewed, { revision: number }>(async () => {
      throw new Error('leaseMachine: provide the `renew` actor with machine.provide({ actors: { renew } })');
    }),
    release: fromPromise<void, { revision: number }>(async () => {
      throw new Error('leaseMachine: provide the `release` actor with machine.provide({ actors: { release } })');
    }),
    // Hears the key being deleted and sends `lease.freed`. A watch that cannot be made is not
    // an error of the lease: trying every `contendEveryMs` still finds the key free.
    watchHolder: fromCallback(() => undefined),
  },
  delays: {
    contendEvery: ({ context }) => context.timings.contendEveryMs,
    renewEvery: ({ context }) => context.timings.renewEveryMs,
    renewRetry: ({ context }) => context.timings.renewRetryMs,
  },
  guards: {
    /** The broker answered that the key is not this controller's any more. */
    isRefused: ({ event }) => isRefusal((event as { error?: unknown }).error),
    /** The key holds a value no controller wrote. */
    isForeign: ({ event }) => isForeign((event as { error?: unknown }).error),
  },
  actions: {
    /** The gate may let acting happen until `actingUntil` (the actor's clock) under `epoch`. */
    openGate: (_, _params: GateParams) => undefined,
    /** Nothing may act any more, whatever the clock says. */
    closeGate: () => undefined,
    /** The lease is someone else's, or could not be taken: for the log and status. */
    noteRival: (_, _params: { reason: string }) => undefined,
    /** The lease was lost to a value no controller wrote: for the log and status; the process stays. */
    noteForeign: (_, _params: { reason: string; epoch: number | null }) => undefined,
    /** The lease was lost: the process must stop acting and exit. */
    announceLoss: (_, _params: { reason: string; epoch: number | null }) => undefined,
    recordTaken: assign(({ event }) => {
      const taken = (event as unknown as { output: LeaseTaken }).output;
      return { epoch: taken.epoch, revision: taken.revision, actingUntil: taken.actingUntil, lastError: null };
    }),
    recordRenewed: assign(({ event }) => {
      const renewed = (event as unknown as { output: LeaseRenewed }).output;
      return { revision: renewed.revision, actingUntil: renewed.actingUntil, lastError: null };
    }),
    recordFailure: assign({ lastError: ({ event }) => failureText((event as { error?: unknown }).error) }),
    forgetHold: assign({ revision: null, actingUntil: 0 }),
  },
}).createMachine({
  id: 'lease',
  context: ({ input }) => ({
    timings: { ...LEASE_TIMINGS, ...input?.timings },
    epoch: null,
    revision: null,
    actingUntil: 0,
    lastError: null,
  }),
  initial: 'taking',
  states: {
    /** Trying to create the key (and, taken, to raise the store's epoch floor to it). */
    taking: {
      invoke: {
        id: 'take',
        src: 'take',
        onDone: { target: 'holding', actions: 'recordTaken' },
        onError: { target: 'contending', actions: ['recordFailure', { type: 'noteRival', params: ({ context }) => ({ reason: context.lastError ?? 'unknown' }) }] },
      },
      // A take still under way when the controller stops is given back by the actor if it lands.
      on: { 'controller.stopping': { target: 'released' } },
    },
    /** Someone else holds the lease (or the broker could not be asked): wait, then try again. */
    contending: {
      invoke: { id: 'watch', src: 'watchHolder' },
      after: { contendEvery: { target: 'taking' } },
      on: {
        'lease.freed': { target: 'taking' },
        'controller.stopping': { target: 'released' },
      },
    },
    /**
     * This controller holds the lease. Whether it may act right now is the gate's (the clock's)
     * to say; here the key is kept: renewed every `renewEveryMs`, retried when the broker could
     * not be reached, lost when a renewal is refused.
     */
    holding: {
      entry: { type: 'openGate', params: ({ context }) => ({ epoch: context.epoch ?? 0, revision: context.revision ?? 0, actingUntil: context.actingUntil }) },
      exit: 'closeGate',
      initial: 'waiting',
      on: { 'controller.stopping': { target: 'releasing' } },
      states: {
        /** The last write succeeded; the next renewal is due in `renewEveryMs`. */
        waiting: {
          after: { renewEvery: { target: 'renewing' } },
        },
        /** Writing the key again at its revision. */
        renewing: {
          invoke: {
            id: 'renew',
            src: 'renew',
            input: ({ context }) => ({ revision: context.revision ?? 0 }),
            onDone: {
              target: 'waiting',
              actions: [
                'recordRenewed',
                { type: 'openGate', params: ({ context, event }) => ({ epoch: context.epoch ?? 0, revision: event.output.revision, actingUntil: event.output.actingUntil }) },
              ],
            },
            onError: [
              {
                guard: 'isForeign',
                target: '#lease.contending',
                actions: ['recordFailure', { type: 'noteForeign', params: ({ context }) => ({ reason: context.lastError ?? 'a value no controller wrote', epoch: context.epoch }) }],
              },
              { guard: 'isRefused', target: '#lease.lost', actions: 'recordFailure' },
              { target: 'retrying', actions: 'recordFailure' },
            ],
          },
        },
        /** The broker could not be asked; the gate closes on its own if this lasts. */
        retrying: {
          after: { renewRetry: { target: 'renewing' } },
        },
      },
    },
    /** Giving the key back (deleting it at this controller's revision), so a standby takes it at once. */
    releasing: {
      invoke: {
        id: 'release',
        src: 'release',
        input: ({ context }) => ({ revision: context.revision ?? 0 }),
        onDone: { target: 'released', actions: 'forgetHold' },
        // Refused (someone else wrote the key) or unreachable: either way there is nothing more to give back.
        onError: { target: 'released', actions: ['recordFailure', 'forgetHold'] },
      },
    },
    /** The controller stopped; it holds nothing. */
    released: {
      type: 'final',
    },
    /** A renewal was refused: someone else holds the lease now. The process exits. */
    lost: {
      type: 'final',
      entry: [
        'forgetHold',
        { type: 'announceLoss', params: ({ context }) => ({ reason: context.lastError ?? 'the renewal was refused', epoch: context.epoch }) },
      ],
    },
  },
});
