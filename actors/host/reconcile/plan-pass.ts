import type { HostState } from '../../../schema/host-state';
import { resourceKey, shapeOfKey, type Resource, type ResourceShape } from '../../../schema/resource';
import type { ApplyContext, Observation } from '../appliers/applier';
import { applierFor, type ApplierSet } from './applier-set';
import { desiredResources, storedDeclaration } from './desired-resources';
import { messageOf } from '../../shared/message-of';
import { PassMemo } from '../appliers/pass-memo';

/**
 * What a pass would do to one resource: `apply` (it differs), `run` (an action would be run),
 * `adopt` (the machine has it and the host did not make it: adoption would keep the original
 * and take it over when it matches, or leave the machine's value), `remove`, `stop` or
 * `forget` (owned and no longer held, per the removal table), `none` (already matches),
 * `refused` (not the host's to do) and `unreadable` (the machine could not be read).
 */
export type PlannedChange = 'apply' | 'run' | 'adopt' | 'remove' | 'stop' | 'forget' | 'none' | 'refused' | 'unreadable';

/** One line of a dry run. */
export interface PlannedResult {
  key: string;
  shape: ResourceShape;
  change: PlannedChange;
  detail?: string;
}

/** What a dry run said: every resource's planned change, and the counts of each. */
export interface PassPlan {
  dry_run: true;
  results: PlannedResult[];
  counts: Partial<Record<PlannedChange, number>>;
}

/** What planning reads: the appliers' `observe` and `refuse`, and nothing that writes. */
export interface PlanDeps {
  appliers: ApplierSet;
  ctx: ApplyContext;
}

/**
 * A dry run of {@link reconcilePass} on `state` (puppet --noop, ansible --check): each resource
 * is looked at, never applied, nothing is written to the machine or the store, and no program of
 * a declaration runs. An action's `unless` guard is a program, so it is not asked: the action is
 * reported as one that would run when its guard says it has not (a `creates` guard is only a
 * look at a path, and is asked). Observing a package, a service or a container asks the
 * machine's own tools, read only. What a pass would leave of the directories it made is not
 * planned.
 */
export async function planPass(state: HostState, given: PlanDeps): Promise<PassPlan> {
  // Directories and accounts looked up once for the plan, as for a pass (see PassMemo); the
  // directories it holds open are closed when the plan is made.
  const pass = given.ctx.pass ?? new PassMemo();
  try {
    return await planWith(state, { ...given, ctx: { ...given.ctx, pass } });
  } finally {
    if (given.ctx.pass === undefined) pass.close();
  }
}

async function planWith(state: HostState, deps: PlanDeps): Promise<PassPlan> {
  const desired = desiredResources(state);
  const ownedKeys = new Set(state.owned.resources.map((entry) => entry.key));
  const marked = new Set(state.applying);
  const results: PlannedResult[] = [];
  for (const resource of desired) results.push(await planOne(resource, ownedKeys.has(resourceKey(resource)) || marked.has(resourceKey(resource)), deps));
  const overlay = state.last_declaration !== null && storedDeclaration(state)?.kind === 'overlay';
  if (!overlay) {
    const keep = new Set(desired.map(resourceKey));
    const undeclared = [...new Set([...ownedKeys, ...marked])].filter((key) => !keep.has(key));
    for (const key of undeclared) results.push(planRemoval(key, deps));
  }
  const counts: PassPlan['counts'] = {};
  for (const result of results) counts[result.change] = (counts[result.change] ?? 0) + 1;
  return { dry_run: true, results, counts };
}

/** True when the plan has something the real pass would fail or refuse: the CLI exits 1. */
export function planFails(plan: PassPlan): boolean {
  return plan.results.some((result) => result.change === 'refused' || result.change === 'unreadable');
}

/** True when the real pass would change the machine (or the store, taking something over). */
export function planChanges(plan: PassPlan): boolean {
  return plan.results.some((result) => result.change !== 'none' && result.change !== 'refused' && result.change !== 'unreadable');
}

async function planOne(resource: Resource, ours: boolean, deps: PlanDeps): Promise<PlannedResult> {
  const base = { key: resourceKey(resource), shape: resource.shape };
  const applier = applierFor(deps.appliers, resource.shape);
  if (applier === undefined) return { ...base, change: 'refused', detail: `this host does not take ${resource.shape} resources` };
  const refusal = applier.refuse?.(resource, deps.ctx);
  if (refusal !== undefined) return { ...base, change: 'refused', detail: refusal };
  if (resource.shape === 'action' && 'unless' in resource.guard) {
    return { ...base, change: 'run', detail: `would run if its guard (${resource.guard.unless.join(' ')}) says it has not; a dry run does not run the guard` };
  }
  let observation: Observation;
  try {
    observation = await applier.observe(resource, deps.ctx);
  } catch (error) {
    return { ...base, change: 'unreadable', detail: `could not read the machine: ${messageOf(error)}` };
  }
  if (!ours && observation.unreadable !== undefined) {
    return { ...base, change: 'unreadable', detail: `could not read the machine: ${observation.unreadable}; adoption would keep nothing and write nothing` };
  }
  if (!ours && observation.present) {
    return {
      ...base,
      change: 'adopt',
      detail: observation.differences.length === 0
        ? 'the machine already has it as declared: the host would take it over'
        : `the machine has its own (${observation.differences.join('; ')}): adoption would keep the original, and the machine's value wins`,
    };
  }
  if (observation.unreadable !== undefined) return { ...base, change: 'unreadable', detail: `could not read the machine: ${observation.unreadable}` };
  if (observation.differences.length === 0) return { ...base, change: 'none' };
  return { ...base, change: resource.shape === 'action' ? 'run' : 'apply', detail: observation.differences.join('; ') };
}

// The removal table (appliers/applier.ts, Removal): what undeclaring each shape does.
const REMOVAL: Record<ResourceShape, PlannedChange> = { file: 'remove', directory: 'remove', container: 'remove', service: 'stop', package: 'forget', action: 'forget' };

function planRemoval(key: string, deps: PlanDeps): PlannedResult {
  const shape = shapeOfKey(key);
  if (applierFor(deps.appliers, shape) === undefined) {
    return { key, shape, change: 'unreadable', detail: `owned, but this host has no ${shape} applier to remove it` };
  }
  return { key, shape, change: REMOVAL[shape], detail: 'owned, and no longer declared' };
}
