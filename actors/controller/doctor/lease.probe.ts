import type { LeaseHolder } from '../../../schema/lease-holder';
import type { LeaseStanding } from '../lease/lease-gate';
import { failed, passed, type DoctorProbe } from './doctor-probe';

/** What the lease probe reads. */
export interface LeaseProbeSources {
  /** This controller's standing, from its gate. */
  standing(): LeaseStanding;
  /** The lease key as the broker holds it; null when nobody holds it. */
  current(): Promise<{ holder: LeaseHolder | null; revision: number } | null>;
  /** This process's random instance, as its writes of the key name it. */
  instance: string;
  /** The key's age limit: a renewal older than this means nobody renews it. */
  ttlMs: number;
  now(): Date;
}

/**
 * The lease is held by this controller and renewed: its gate is open, and the key in the broker
 * names this process and was renewed within the key's age limit. Reading the key is the check
 * the gate cannot make on its own: that the broker holds what this controller believes.
 */
export function leaseProbe(sources: LeaseProbeSources): DoctorProbe {
  return {
    name: 'lease',
    whenCannotRun: 'check that the broker answers (the broker probe), then run mesh-control doctor again',
    run: async () => {
      const standing = sources.standing();
      if (standing.state !== 'acting') {
        return failed(`this controller is ${standing.state}${standing.note === null ? '' : `: ${standing.note}`}`, 'see mesh-control status --dir DIR for who holds the lease; a controller that lost it exits, and is started again with mesh-control serve --dir DIR');
      }
      const key = await sources.current();
      if (key === null) return failed('this controller acts, and the lease key is gone from the broker', 'the lease machine takes it again on its next renewal; if this stays, restart mesh-control serve --dir DIR');
      if (key.holder === null) return failed(`the lease key holds a value no controller wrote (revision ${key.revision})`, 'find what wrote the key; no controller acts until it is deleted or expires');
      if (key.holder.instance !== sources.instance) return failed(`this controller acts, and the lease key names ${key.holder.controller}`, 'two controllers believe they hold the lease: stop the one that should not act (its next renewal is refused)');
      const age = sources.now().getTime() - Date.parse(key.holder.renewed_at);
      if (age > sources.ttlMs) return failed(`the lease was last renewed ${Math.round(age / 1000)} s ago, past its ${sources.ttlMs / 1000} s age limit`, 'this controller\'s event loop or its link to the broker is stalled: see its log, and restart mesh-control serve --dir DIR if it does not recover');
      return passed(`held by this controller under epoch ${standing.epoch}, renewed ${Math.max(0, Math.round(age / 1000))} s ago (revision ${key.revision})`);
    },
  };
}
