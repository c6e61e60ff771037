import { createActor, fromPromise, waitFor } from 'xstate';
import { adoptionMachine } from '../../../machines/adoption.machine';
import type { AdoptionInput, KeepOriginalInput, KeptOriginal } from '../../../machines/adoption.machine';
import { resourceKey, type Resource } from '../../../schema/resource';
import type { Applier, ApplyContext, Observation } from '../appliers/applier';
import type { Adopter, AdoptionDecision } from '../reconcile/converge';
import { briefingSubject } from './briefing-subject';
import { keepOriginal } from './keep-original';
import { originalsDirFor } from './originals-dir';

/** What one adoption works with: the resource, its applier, and the machine it is on. */
export interface AdoptionDeps {
  applier: Applier;
  resource: Resource;
  ctx: ApplyContext;
}

/**
 * The adoption machine for one resource, with `keepOriginal` wired to the resource's applier.
 * Start it with {@link adoptionInputFor}, then send `resource.observed`.
 */
export function adoptionLogic(deps: AdoptionDeps) {
  return adoptionMachine.provide({
    actors: {
      keepOriginal: fromPromise<KeptOriginal | null, KeepOriginalInput>(({ input, signal }) =>
        keepOriginal(deps.applier, deps.resource, withSignal(deps.ctx, signal), input.dir)),
    },
  });
}

/** The logic {@link adoptionLogic} returns. */
export type AdoptionLogic = ReturnType<typeof adoptionLogic>;

/** The input of one adoption: the line's subject and where the original goes, from the resource key. */
export function adoptionInputFor(resource: Resource, ctx: Pick<ApplyContext, 'stateDir'>): AdoptionInput {
  const key = resourceKey(resource);
  return { subject: briefingSubject(key), originalsDir: originalsDirFor(ctx.stateDir, key) };
}

/**
 * The adopter the reconcile engine calls for something the machine already has and the host
 * did not create: runs one adoption machine to its end and returns its decision. Adoption always
 * completes, so even a fault in the machine itself comes back as a `failed` line rather than
 * an error that would stop the pass.
 */
export function createAdopter(): Adopter {
  return {
    async adopt(resource: Resource, applier: Applier, observation: Observation, ctx: ApplyContext): Promise<AdoptionDecision> {
      const input = adoptionInputFor(resource, ctx);
      const actor = createActor(adoptionLogic({ applier, resource, ctx }), { input });
      try {
        actor.start();
        actor.send({ type: 'resource.observed', observation: copyOf(observation) });
        // A resource taken rests in `taken`, which is not final (it is handed back later): the
        // decision is the context's once the snapshot is `decided`.
        const snapshot = await waitFor(actor, (s) => s.hasTag('decided') || s.status !== 'active', { timeout: Infinity });
        if (snapshot.status === 'error') throw snapshot.error;
        if (snapshot.context.decision === null) throw new Error('the adoption machine ended without a decision');
        return snapshot.context.decision;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return { take: false, line: { status: 'failed', subject: input.subject, detail: `adoption stopped: ${reason}`.slice(0, 4096) } };
      } finally {
        actor.stop();
      }
    },
  };
}

// The machine keeps the observation in its context; a copy keeps later changes by the caller
// out of the decision.
function copyOf(observation: Observation): Observation {
  return {
    present: observation.present,
    differences: [...observation.differences],
    ...(observation.unreadable === undefined ? {} : { unreadable: observation.unreadable }),
  };
}

function withSignal(ctx: ApplyContext, signal: AbortSignal): ApplyContext {
  return { ...ctx, signal: ctx.signal === undefined ? signal : AbortSignal.any([ctx.signal, signal]) };
}
