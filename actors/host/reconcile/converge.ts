import type { BriefingLine } from '../../../schema/briefing';
import type { HostState } from '../../../schema/host-state';
import type { OwnedResource } from '../../../schema/owned';
import type { ResourceResult } from '../../../schema/report';
import { resourceDigest, resourceKey, shapeOfKey, type Resource, type ResourceShape } from '../../../schema/resource';
import type { Applier, ApplyContext, Observation } from '../appliers/applier';
import type { StateHandle } from '../store/state-handle';
import { applierFor, type ApplierSet } from './applier-set';

/**
 * Decides what to do with something the machine already has and the host did not create (the
 * first apply over a machine in use). Implemented by the adoption actor.
 */
export interface Adopter {
  adopt(resource: Resource, applier: Applier, observation: Observation, ctx: ApplyContext): Promise<AdoptionDecision>;
}

/**
 * `take`: the host owns it from now on (it already matches the declaration). Otherwise the
 * machine's value wins and the resource is left alone until the conflict is resolved.
 */
export interface AdoptionDecision {
  take: boolean;
  line: BriefingLine;
  originalKeptAt?: string;
}

/** What converge needs from the running host. */
export interface ConvergeDeps {
  state: StateHandle;
  appliers: ApplierSet;
  ctx: ApplyContext;
  adopter: Adopter;
  now: () => Date;
  /** The name adoption briefings carry: the node's name, or the machine's before enrolment. */
  nodeName: () => string;
}

/** How far converge goes. */
export interface ConvergeOptions {
  /** Remove (per the removal table) what the host owns that `declared` no longer names. */
  removeUndeclared: boolean;
}

/**
 * Makes the machine match `declared`, one resource at a time: observe, apply what differs, read
 * back, and record the resource as owned only after the read-back matched. Then removes what the
 * host owns and no longer declares. Every record is written to the store as it happens, so a
 * host killed at any instant restarts with a store from which the next pass converges: a key
 * is marked `applying` before the host touches the machine for it, so something the host was in
 * the middle of creating is never mistaken for the machine's own on the next start.
 */
export async function converge(declared: readonly Resource[], options: ConvergeOptions, deps: ConvergeDeps): Promise<ResourceResult[]> {
  const results: ResourceResult[] = [];
  for (const resource of declared) {
    if (deps.ctx.signal?.aborted) break;
    results.push(await convergeOne(resource, deps));
  }
  if (options.removeUndeclared && !deps.ctx.signal?.aborted) {
    const keep = new Set(declared.map(resourceKey));
    // What the host owns and no longer declares, and any key left marked `applying` by a host
    // killed mid-apply that is no longer declared (its own half-made work): all undone, in an
    // order that empties a directory of the host's files before the directory's turn.
    const state = deps.state.current();
    const owned = state.owned.resources.filter((entry) => !keep.has(entry.key));
    const ownedKeys = new Set(state.owned.resources.map((entry) => entry.key));
    const halfMade = state.applying
      .filter((key) => !keep.has(key) && !ownedKeys.has(key))
      .map((key): OwnedResource => ({ key, shape: shapeOfKey(key), digest: '0'.repeat(64), recorded_at: deps.now().toISOString() }));
    for (const entry of [...owned, ...halfMade].sort(removalOrder)) {
      if (deps.ctx.signal?.aborted) break;
      results.push(await removeOne(entry, deps));
    }
  }
  return results;
}

async function convergeOne(resource: Resource, deps: ConvergeDeps): Promise<ResourceResult> {
  const key = resourceKey(resource);
  const base = { key, shape: resource.shape } as const;
  const applier = applierFor(deps.appliers, resource.shape);
  if (applier === undefined) return { ...base, outcome: 'refused', detail: `this host does not take ${resource.shape} resources` };
  const refusal = applier.refuse?.(resource, deps.ctx);
  if (refusal !== undefined) return { ...base, outcome: 'refused', detail: refusal };

  const digest = resourceDigest(resource);
  let observation: Observation;
  try {
    observation = await applier.observe(resource, deps.ctx);
  } catch (error) {
    return { ...base, outcome: 'failed', detail: `could not read the machine: ${messageOf(error)}` };
  }
  const state = deps.state.current();
  const owned = state.owned.resources.find((entry) => entry.key === key);
  const ours = owned !== undefined || state.applying.includes(key);

  // Something already there, or something that cannot be read, that the host did not make:
  // adoption decides (and an unreadable one becomes an `unknown` line, not a blind write).
  if (!ours && (observation.present || observation.unreadable !== undefined)) {
    const decision = await deps.adopter.adopt(resource, applier, observation, deps.ctx);
    await recordBriefingLine(decision.line, deps);
    if (!decision.take) return { ...base, outcome: 'kept', detail: decision.line.detail };
    await record({ key, shape: resource.shape, digest, adopted: true, originalKeptAt: decision.originalKeptAt }, deps);
    return { ...base, outcome: 'unchanged', detail: `adopted: ${decision.line.detail}` };
  }
  if (observation.unreadable !== undefined) return { ...base, outcome: 'failed', detail: `could not read the machine: ${observation.unreadable}` };
  if (observation.differences.length === 0) {
    if (owned?.digest !== digest) await record({ key, shape: resource.shape, digest, adopted: owned?.adopted, originalKeptAt: owned?.original_kept_at }, deps);
    return { ...base, outcome: 'unchanged' };
  }

  await deps.state.update((s) => (s.applying.includes(key) ? s : { ...s, applying: [...s.applying, key] }));
  let output: string | undefined;
  try {
    output = (await applier.apply(resource, deps.ctx)).output;
  } catch (error) {
    await clearApplying(key, deps);
    return { ...base, outcome: 'failed', detail: messageOf(error) };
  }
  const readBack: Observation = await applier.observe(resource, deps.ctx).catch((error: unknown) => ({ present: false, differences: [`read-back failed: ${messageOf(error)}`] }));
  if (readBack.differences.length > 0 || readBack.unreadable !== undefined) {
    await clearApplying(key, deps);
    const why = readBack.unreadable ?? readBack.differences.join('; ');
    return { ...base, outcome: 'failed', detail: `applied, but reading back shows: ${why}`, ...(output === undefined ? {} : { output }) };
  }
  await record({ key, shape: resource.shape, digest, adopted: owned?.adopted, originalKeptAt: owned?.original_kept_at }, deps);
  return { ...base, outcome: 'applied', detail: observation.differences.join('; '), ...(output === undefined ? {} : { output }) };
}

async function removeOne(owned: OwnedResource, deps: ConvergeDeps): Promise<ResourceResult> {
  const base = { key: owned.key, shape: owned.shape } as const;
  const applier = applierFor(deps.appliers, owned.shape);
  if (applier === undefined) {
    return { ...base, outcome: 'failed', detail: `owned, but this host has no ${owned.shape} applier to remove it; still owned` };
  }
  // Moved from owned to applying before the machine is touched, so a host killed part way never
  // claims to own something it already deleted, and still knows the leftovers are its own.
  const wasOwned = deps.state.current().owned.resources.find((r) => r.key === owned.key);
  await deps.state.update((s) => ({
    ...s,
    applying: s.applying.includes(owned.key) ? s.applying : [...s.applying, owned.key],
    owned: { resources: s.owned.resources.filter((r) => r.key !== owned.key) },
  }));
  try {
    const removal = await applier.remove(owned.key, deps.ctx);
    await clearApplying(owned.key, deps);
    return { ...base, outcome: removal };
  } catch (error) {
    // Still the host's: owned again if it was, else left marked so the next pass tries again.
    if (wasOwned !== undefined) {
      await deps.state.update((s) => ({
        ...s,
        applying: s.applying.filter((k) => k !== owned.key),
        owned: { resources: [...s.owned.resources, wasOwned] },
      }));
    }
    return { ...base, outcome: 'failed', detail: `could not remove it, so it is still owned: ${messageOf(error)}` };
  }
}

// Containers go first (they may hold files and directories open), then services, then files
// and directories deepest first, files before the directory holding them, so a directory the
// host made is empty of the host's files by the time its turn comes.
const REMOVAL_RANK: Record<ResourceShape, number> = { container: 0, service: 1, action: 2, package: 3, file: 4, directory: 5 };

function removalOrder(a: OwnedResource, b: OwnedResource): number {
  const pathA = pathOfKey(a.key);
  const pathB = pathOfKey(b.key);
  if (pathA !== undefined && pathB !== undefined) {
    const depth = pathB.split('/').length - pathA.split('/').length;
    if (depth !== 0) return depth;
  }
  return REMOVAL_RANK[a.shape] - REMOVAL_RANK[b.shape] || a.key.localeCompare(b.key);
}

function pathOfKey(key: string): string | undefined {
  return key.startsWith('file:') || key.startsWith('directory:') ? key.slice(key.indexOf(':') + 1) : undefined;
}

interface RecordEntry {
  key: string;
  shape: ResourceShape;
  digest: string;
  adopted?: boolean | undefined;
  originalKeptAt?: string | undefined;
}

/** Records one resource as owned, and clears its `applying` mark, in one durable write. */
function record(entry: RecordEntry, deps: ConvergeDeps): Promise<HostState> {
  const recorded: OwnedResource = {
    key: entry.key,
    shape: entry.shape,
    digest: entry.digest,
    recorded_at: deps.now().toISOString(),
    ...(entry.adopted ? { adopted: true } : {}),
    ...(entry.originalKeptAt === undefined ? {} : { original_kept_at: entry.originalKeptAt }),
  };
  return deps.state.update((s) => ({
    ...s,
    applying: s.applying.filter((k) => k !== entry.key),
    owned: { resources: [...s.owned.resources.filter((r) => r.key !== entry.key), recorded] },
  }));
}

function clearApplying(key: string, deps: ConvergeDeps): Promise<HostState> {
  return deps.state.update((s) => (s.applying.includes(key) ? { ...s, applying: s.applying.filter((k) => k !== key) } : s));
}

/** Adds or replaces (by subject) one line of the briefing kept in the store. */
function recordBriefingLine(line: BriefingLine, deps: ConvergeDeps): Promise<HostState> {
  return deps.state.update((s) => {
    const briefing = s.briefing ?? { node: deps.nodeName(), adopted_at: deps.now().toISOString(), lines: [], look_at: [] };
    const lines = [...briefing.lines.filter((l) => l.subject !== line.subject), line];
    return { ...s, briefing: { ...briefing, lines } };
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
