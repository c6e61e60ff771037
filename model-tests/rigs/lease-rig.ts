import { createActor, SimulatedClock, type Actor } from 'xstate';
import { LEASE_TIMINGS, type LeaseRenewed, type LeaseTaken } from '../../machines/lease.machine';
import type { LeaseHolder } from '../../schema/lease-holder';
import type { LeaseOperations } from '../../actors/controller/lease/kv-lease';
import { LEASE_KEY } from '../../actors/controller/lease/lease-bucket';
import type { LeaseLost } from '../../actors/controller/lease/lease-errors';
import { LeaseGate } from '../../actors/controller/lease/lease-gate';
import { leaseLogic } from '../../actors/controller/lease/lease.actor';
import type { ControllerLease, LeaseWorld } from '../../actors/controller/lease/testing/lease-world';

/** Which operation of the lease a held call is. */
export type LeaseOperation = 'take' | 'renew' | 'release';

/** One call of the lease actor into the bucket, held until the rig lets it go. */
export interface HeldCall {
  readonly operation: LeaseOperation;
  /** True once let go (or dropped). */
  released: boolean;
  /** How the real operation ended, once it has. */
  result?: { value: unknown } | { error: unknown };
  go(): Promise<void>;
  /** Never runs it: the actor has left the state that asked for it. */
  drop(): void;
}

/** The lease's operations on the bucket, each held until a test lets it go. */
class HeldOperations implements LeaseOperations {
  readonly calls: HeldCall[] = [];

  constructor(private readonly real: LeaseOperations) {}

  take(signal: AbortSignal): Promise<LeaseTaken> {
    return this.hold('take', () => this.real.take(signal));
  }

  renew(revision: number): Promise<LeaseRenewed> {
    return this.hold('renew', () => this.real.renew(revision));
  }

  release(revision: number): Promise<void> {
    return this.hold('release', () => this.real.release(revision));
  }

  watchFreed(onFreed: () => void): () => void {
    return this.real.watchFreed(onFreed);
  }

  current(): Promise<{ holder: LeaseHolder | null; revision: number } | null> {
    return this.real.current();
  }

  private hold<T>(operation: LeaseOperation, run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let ended: Promise<void> = Promise.resolve();
      const call: HeldCall = {
        operation,
        released: false,
        go: () => {
          if (!call.released) {
            call.released = true;
            ended = run().then(
              (value) => {
                call.result = { value };
                resolve(value);
              },
              (error: unknown) => {
                call.result = { error };
                reject(error);
              },
            );
          }
          return ended;
        },
        drop: () => {
          call.released = true;
          call.result = { error: new Error('dropped: the actor no longer waits for it') };
        },
      };
      this.calls.push(call);
    });
  }
}

/**
 * The real lease actor (leaseLogic) over a real KV bucket and a real PostgreSQL epoch floor, on
 * a simulated clock that is also the gate's monotonic clock, for the lease machine's model
 * tests. Every take, renewal and release it makes is held until a driver lets it go, so a path
 * can arrange what the broker will answer first: a rival controller (its own connection and
 * identity on the same bucket) holds, steals or gives back the key; this controller's link to
 * the broker is frozen (a proxy) so a renewal times out for real.
 */
export class LeaseRig {
  readonly clock = new SimulatedClock();
  readonly gate = new LeaseGate(() => this.clock.now());
  readonly losses: LeaseLost[] = [];
  readonly log: string[] = [];
  readonly actor: Actor<ReturnType<typeof leaseLogic>>;
  readonly ops: HeldOperations;

  private constructor(readonly ours: ControllerLease, readonly rival: ControllerLease) {
    this.ops = new HeldOperations(ours.lease);
    this.actor = createActor(
      leaseLogic({ lease: this.ops, gate: this.gate, onLost: (error) => this.losses.push(error), log: (line) => this.log.push(line) }),
      { clock: this.clock, input: { timings: LEASE_TIMINGS } },
    );
    this.actor.start();
  }

  /** A fresh bucket, this controller (its link through a freeze proxy) and a rival on it. */
  static async create(world: LeaseWorld): Promise<LeaseRig> {
    const bucket = world.bucketName();
    let now = (): number => 0;
    const ours = await world.controller({ bucket, name: 'ours:1', proxied: true, timeoutMs: 300, now: () => now() });
    const rival = await world.controller({ bucket, name: 'rival:2' });
    const rig = new LeaseRig(ours, rival);
    now = () => rig.clock.now();
    return rig;
  }

  /** The oldest call still held, which must be of `operation`. */
  held(operation: LeaseOperation): HeldCall {
    const call = this.ops.calls.find((candidate) => !candidate.released);
    if (call === undefined) throw new Error(`no ${operation} is held; calls so far: ${this.ops.calls.map((c) => `${c.operation}${c.released ? ' (let go)' : ''}`).join(', ')}`);
    if (call.operation !== operation) throw new Error(`the held call is a ${call.operation}, not a ${operation}`);
    return call;
  }

  /** Calls held and not let go. */
  waiting(): HeldCall[] {
    return this.ops.calls.filter((call) => !call.released);
  }

  /** Who holds the key now: `ours`, `rival`, `nobody`, or a `stranger`'s value no controller wrote. */
  async holder(): Promise<'ours' | 'rival' | 'nobody' | 'stranger'> {
    const current = await this.rival.lease.current();
    if (current === null) return 'nobody';
    if (current.holder === null) return 'stranger';
    if (current.holder?.instance === this.ours.identity.instance) return 'ours';
    if (current.holder?.instance === this.rival.identity.instance) return 'rival';
    throw new Error(`the key holds a stranger: ${JSON.stringify(current)}`);
  }

  /** The rival takes the key: deleting it from under this controller first if need be. */
  async rivalTakes(): Promise<void> {
    if ((await this.holder()) === 'rival') return;
    await this.rival.bucket.kv.delete(LEASE_KEY);
    await this.rival.lease.take(new AbortController().signal);
  }

  /** Something that is not a controller writes the key: the value is not a lease holder. */
  async strangerWrites(): Promise<void> {
    await this.rival.bucket.kv.put(LEASE_KEY, 'written by something that is not a controller');
  }

  /** The key is free: whoever holds it loses it. */
  async keyFreed(): Promise<void> {
    if ((await this.holder()) !== 'nobody') await this.rival.bucket.kv.delete(LEASE_KEY);
  }

  /** Stops the actor and closes both controllers' connections. */
  async dispose(): Promise<void> {
    this.actor.stop();
    for (const call of this.waiting()) call.drop();
    this.ours.proxy?.thaw();
    await Promise.allSettled([this.ours.nc.close(), this.rival.nc.close()]);
    await this.ours.proxy?.close();
  }
}
