import type { Briefing, BriefingLine } from '../../../schema/briefing';
import type { HostState } from '../../../schema/host-state';
import type { OwnedResource } from '../../../schema/owned';
import type { ResourceResult } from '../../../schema/report';
import { parsedResourceDigest, resourceKey, shapeOfKey, type Resource, type ResourceShape } from '../../../schema/resource';
import type { Applier, ApplyContext, Observation } from '../appliers/applier';
import { DirectorySyncBarrier } from '../appliers/directory-sync-barrier';
import { PassMemo } from '../appliers/pass-memo';
import { removeMadeDirectory } from '../appliers/directory.applier';
import type { StateHandle } from '../store/state-handle';
import { applierFor, type ApplierSet } from './applier-set';
import { utcTimestamp } from '../../shared/time/utc-timestamp';
import { briefingSubject } from '../adoption/briefing-subject';
import { forgetKeptAt, handBackOrRemove, keptOriginalOf, lineOf, type Undone } from '../adoption/hand-back';
import { droppedConflict, resolvedConflict } from '../adoption/conflict';
import { messageOf } from '../../shared/message-of';

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
export async function converge(declared: readonly Resource[], options: ConvergeOptions, given: ConvergeDeps): Promise<ResourceResult[]> {
  // Directory syncs wait for the store write that records the batch (see DirectorySyncBarrier).
  // What the pass looks up once (directories, accounts) is kept for the pass (see PassMemo).
  const pass = given.ctx.pass ?? new PassMemo();
  const deps: ConvergeDeps = { ...given, ctx: { ...given.ctx, barrier: given.ctx.barrier ?? new DirectorySyncBarrier(), pass } };
  try {
    return await convergeWith(declared, options, deps);
  } finally {
    // The directories the pass held open; a memo the caller gave is the caller's to close.
    if (given.ctx.pass === undefined) pass.close();
  }
}

async function convergeWith(declared: readonly Resource[], options: ConvergeOptions, deps: ConvergeDeps): Promise<ResourceResult[]> {
  noteRestartOn(declared, deps);
  const results: ResourceResult[] = [];
  results.push(...(await finishHandBacks(new Set(declared.map(resourceKey)), deps)));
  // What a batch applied is recorded with the next batch's first write (see convergeBatch).
  let owed: StateChange | undefined;
  try {
    for (let start = 0; start < declared.length; start += APPLY_BATCH) {
      if (deps.ctx.signal?.aborted) break;
      // The appliers' file system calls are synchronous (see appliers/root-path.ts): between
      // batches the event loop has its turn, so the link, heartbeats and signals are not held
      // up by a long pass.
      if (start > 0) await yieldToEventLoop();
      // Handed on: the batch writes it (a batch that throws has not, and what it covered
      // stays marked, as after a kill).
      const carried = owed;
      owed = undefined;
      const batch = await convergeBatch(declared.slice(start, start + APPLY_BATCH), deps, carried);
      results.push(...batch.results);
      owed = batch.owed;
    }
  } finally {
    // Written however the loop ended (an abort, or a later batch that threw): what was applied
    // is the host's; a kill before this write leaves it marked, which the next pass converges.
    if (owed !== undefined) await recordAfterSyncs(owed, deps);
  }
  if (!deps.ctx.signal?.aborted) await restartOnLateFiles(declared, results, deps);
  if (!deps.ctx.signal?.aborted) await settleOwedRestarts(options, deps);
  if (options.removeUndeclared && !deps.ctx.signal?.aborted) {
    const keep = new Set(declared.map(resourceKey));
    // What the host owns and no longer declares, and any key left marked `applying` by a host
    // killed mid-apply that is no longer declared (its own half-made work): all undone, in an
    // order that empties a directory of the host's files before the directory's turn.
    results.push(...(await keepParentsOfDeclared(declared, keep, deps)));
    const state = deps.state.current();
    const owned = state.owned.resources.filter((entry) => !keep.has(entry.key));
    const ownedKeys = new Set(state.owned.resources.map((entry) => entry.key));
    const halfMade = state.applying
      .filter((key) => !keep.has(key) && !ownedKeys.has(key))
      .map((key): OwnedResource => ({ key, shape: shapeOfKey(key), digest: '0'.repeat(64), recorded_at: utcTimestamp(deps.now()) }));
    const removals = [...owned, ...halfMade].sort(removalOrder);
    for (let start = 0; start < removals.length; start += BATCH) {
      if (deps.ctx.signal?.aborted) break;
      if (start > 0) await yieldToEventLoop();
      results.push(...(await removeBatch(removals.slice(start, start + BATCH), deps)));
    }
    if (!deps.ctx.signal?.aborted) await removeMadeDirectories(declared, deps);
    if (!deps.ctx.signal?.aborted) await dropUnheldConflicts(declared, deps);
  }
  return results;
}

/**
 * Finishes the hand-backs a killed host left under way, before anything else: a key marked and
 * not owned whose `ok` line says an original was kept is one the host was handing back (a key
 * taken by adoption is owned in the same write as its line). Left for the batch, a key declared
 * again would be taken for the host's own half-made work and written over, when its copy may
 * already be gone and the machine's original back in place. Once finished, a declared key goes
 * through adoption afresh. One that cannot be finished now stays marked, and the removal pass
 * says why.
 */
async function finishHandBacks(declared: ReadonlySet<string>, deps: ConvergeDeps): Promise<ResourceResult[]> {
  const state = deps.state.current();
  const results: ResourceResult[] = [];
  if (state.briefing === null || state.applying.length === 0) return results;
  const owned = new Set(state.owned.resources.map((entry) => entry.key));
  for (const key of state.applying) {
    if (owned.has(key) || deps.ctx.signal?.aborted) continue;
    const line = lineOf(deps.state.current().briefing, key);
    const keptAt = line?.status === 'ok' ? keptOriginalOf(line, key, deps.ctx.stateDir) : undefined;
    const applier = applierFor(deps.appliers, shapeOfKey(key));
    if (keptAt === undefined || applier?.handBack === undefined) continue;
    const undone = await handBackOrRemove(applier, key, deps.ctx, { line, keptAt, resuming: true });
    if (undone.held) continue;
    // A removal through the barrier is durable before the store says it is done.
    await deps.ctx.barrier?.flush();
    await deps.state.update((s) => ({
      ...s,
      applying: s.applying.filter((k) => k !== key),
      briefing: settledLine(s.briefing, key, undone),
    }));
    // Reported when no longer declared; a declared key has its own result from the batch.
    if (!declared.has(key)) results.push({ key, shape: shapeOfKey(key), outcome: undone.outcome, ...(undone.detail === undefined ? {} : { detail: undone.detail }) });
  }
  return results;
}

/**
 * Lets go of the conflicts (`kept`, `unknown`, `failed` lines) whose resource is no longer
 * declared and that the host does not hold, as the adoption machine decides (`conflict` on
 * `resource.released`, see conflict.ts): the host never wrote there and the machine keeps its
 * own value, so the line goes, and the copy kept for it first: a host killed between the two
 * leaves a line whose copy is gone, which the next pass drops, never a copy nothing points to.
 */
async function dropUnheldConflicts(declared: readonly Resource[], deps: ConvergeDeps): Promise<void> {
  const state = deps.state.current();
  if (state.briefing === null) return;
  const held = new Set([...declared.map(resourceKey), ...state.owned.resources.map((entry) => entry.key), ...state.applying].map(briefingSubject));
  const gone = state.briefing.lines
    .filter((line) => line.status !== 'ok' && !held.has(line.subject))
    .map((line) => ({ line, dropped: droppedConflict(line, deps.ctx.stateDir) }))
    .filter(({ dropped }) => dropped.line === null)
    .map(({ line, dropped }) => {
      forgetKeptAt(deps.ctx.stateDir, dropped.forgetOriginalAt);
      return line;
    });
  if (gone.length === 0) return;
  const subjects = new Set(gone.map((line) => line.subject));
  await deps.state.update((s) => ({ ...s, briefing: withoutLines(s.briefing, (line) => subjects.has(line.subject)) }));
}

/** The briefing without the lines `drop` picks; none at all once it has no line left. */
function withoutLines(briefing: Briefing | null, drop: (line: BriefingLine) => boolean): Briefing | null {
  if (briefing === null) return null;
  const lines = briefing.lines.filter((line) => !drop(line));
  if (lines.length === briefing.lines.length) return briefing;
  return lines.length === 0 ? null : { ...briefing, lines };
}

/**
 * A directory the host owns and no longer declares, with declared files or directories still
 * under it (the directory was dropped from the declaration, its contents were not): removing it
 * would fail on every pass, blaming files the host itself holds. It becomes a directory the host
 * made on the way (made_directories), removed by removeMadeDirectories once nothing declared
 * lies under it. An adopted one is left to hand-back, which puts the machine's own back.
 */
async function keepParentsOfDeclared(declared: readonly Resource[], keep: ReadonlySet<string>, deps: ConvergeDeps): Promise<ResourceResult[]> {
  const paths = declared.flatMap((resource) => (resource.shape === 'file' || resource.shape === 'directory' ? [resource.path] : []));
  const under = (directory: string): string[] => paths.filter((path) => path.startsWith(`${directory}/`));
  const parents = deps.state.current().owned.resources.filter((entry) => {
    const path = pathOfKey(entry.key);
    return entry.shape === 'directory' && entry.adopted !== true && !keep.has(entry.key) && path !== undefined && under(path).length > 0;
  });
  if (parents.length === 0) return [];
  const keys = new Set(parents.map((entry) => entry.key));
  const made = parents.map((entry) => pathOfKey(entry.key) as string);
  await deps.state.update((s) => ({
    ...s,
    owned: { resources: s.owned.resources.filter((entry) => !keys.has(entry.key)) },
    made_directories: [...s.made_directories.filter((directory) => !made.includes(directory)), ...made],
  }));
  return parents.map((entry) => {
    const inside = under(pathOfKey(entry.key) as string);
    return {
      key: entry.key,
      shape: entry.shape,
      outcome: 'forgotten' as const,
      detail: `no longer declared, but ${inside.length} declared path(s) lie under it (${inside[0]}${inside.length > 1 ? ', …' : ''}); it stays as a directory made on the way, removed once nothing declared is inside and it is empty`,
    };
  });
}

/**
 * Takes away the directories the host made on the way to declared paths (made_directories)
 * that nothing it declares or still owns lies under any more, deepest first, each only when it
 * is empty; one that something else has put files in is kept, and looked at again next pass. A
 * directory now declared as a resource of its own is the directory applier's, and is forgotten
 * here.
 */
async function removeMadeDirectories(declared: readonly Resource[], deps: ConvergeDeps): Promise<void> {
  const state = deps.state.current();
  if (state.made_directories.length === 0) return;
  const declaredDirectories = new Set(declared.filter((resource) => resource.shape === 'directory').map((resource) => resource.path));
  const held = [
    ...declared.flatMap((resource) => (resource.shape === 'file' || resource.shape === 'directory' ? [resource.path] : [])),
    ...[...state.owned.resources.map((entry) => entry.key), ...state.applying].flatMap((key) => pathOfKey(key) ?? []),
  ];
  const needed = (directory: string): boolean => held.some((path) => path.startsWith(`${directory}/`));
  const remaining: string[] = [];
  const deepestFirst = [...state.made_directories].sort((a, b) => b.split('/').length - a.split('/').length || byCodeUnits(b, a));
  for (const directory of deepestFirst) {
    if (declaredDirectories.has(directory)) continue;
    if (needed(directory) || removeMadeDirectory(directory, deps.ctx) === 'kept') remaining.push(directory);
  }
  if (remaining.length === state.made_directories.length) return;
  const kept = new Set(remaining);
  await deps.state.update((s) => ({ ...s, made_directories: s.made_directories.filter((directory) => kept.has(directory)) }));
}

/**
 * Resources removed between two store writes, and applied between two turns of the event loop.
 * A removal batch costs two store writes (synced, with the whole state). With two writes an
 * apply batch too, at 128 an apply of 1,000 files took 0.51 s where at 64 it took 0.61 (whole
 * process, measured alternately on fresh roots). A batch of 128 files holds the event loop
 * about 80 ms under the run process's flags (the in-host apply of 1,000 files took 0.61 s in
 * bench/ at 64).
 */
const BATCH = 128;

/**
 * Resources looked at, then applied, between two store writes: each costs one store write, one
 * sync of the files it wrote and one of their directories, and its applies give the event loop
 * its turn every BATCH. With one write a batch, an apply of 1,000 files at 256 took 13 % less
 * CPU in user space than at 128 (whole process, measured alternately on fresh roots), and 1 %
 * less again at 512, which holds twice as many temporaries open while they are synced.
 */
const APPLY_BATCH = 256;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface PendingApply {
  index: number;
  resource: Resource;
  applier: Applier;
  key: string;
  digest: string;
  owned: OwnedResource | undefined;
  first: Observation;
}

/** A change of the host's state, to be written with the next store write. */
type StateChange = (state: HostState) => HostState;

/**
 * One batch, with at most one store write of its own however many resources it holds: first
 * every resource is observed and classified (adoption decides about what the host did not
 * make), then one write records what needs no change and marks `applying` every key about to
 * be applied that the host does not own yet, then each is applied in declaration order and read
 * back. What worked is recorded, and the marks cleared, by the change this returns as `owed`:
 * the caller writes it with the next batch's first write (`owed` here is the last batch's),
 * or alone after the last batch. Until that write the keys applied stay marked, so a kill
 * between the two leaves them the host's own half-made work, as a kill before any record
 * does. A batch with nothing to apply leaves its records owed too. A resource is still recorded
 * only after its read-back matched and the directories it changed are synced, and anything the
 * host touches is owned or marked before it does, so a kill at any instant leaves an honest
 * store.
 */
async function convergeBatch(batch: readonly Resource[], deps: ConvergeDeps, owed: StateChange | undefined): Promise<{ results: ResourceResult[]; owed: StateChange | undefined }> {
  const results: ResourceResult[] = new Array(batch.length);
  const records: RecordEntry[] = [];
  const lines: BriefingLine[] = [];
  const pending: PendingApply[] = [];
  const made: string[] = [];
  const before = deps.state.current();
  const ownedBefore = new Map(before.owned.resources.map((entry) => [entry.key, entry]));
  const applyingBefore = new Set(before.applying);

  for (const [index, resource] of batch.entries()) {
    if (deps.ctx.signal?.aborted) break;
    const key = resourceKey(resource);
    const base = { key, shape: resource.shape } as const;
    const applier = applierFor(deps.appliers, resource.shape);
    if (applier === undefined) { results[index] = { ...base, outcome: 'refused', detail: `this host does not take ${resource.shape} resources` }; continue; }
    const refusal = applier.refuse?.(resource, deps.ctx);
    if (refusal !== undefined) { results[index] = { ...base, outcome: 'refused', detail: refusal }; continue; }

    const digest = parsedResourceDigest(resource);
    let observation: Observation;
    try {
      if (ownedBefore.has(key) || applyingBefore.has(key)) applier.tidy?.(resource, deps.ctx);
      observation = await applier.observe(resource, deps.ctx);
    } catch (error) {
      results[index] = { ...base, outcome: 'failed', detail: `could not read the machine: ${messageOf(error)}` };
      continue;
    }
    // Only this batch writes the store while it observes (adoption writes kept originals to
    // disk, not to the store), so what the store held at its start is what it holds now.
    const owned = ownedBefore.get(key);
    const ours = owned !== undefined || applyingBefore.has(key);

    // Something already there, or something that cannot be read, that the host did not make:
    // adoption decides (and an unreadable one becomes an `unknown` line, not a blind write).
    if (!ours && (observation.present || observation.unreadable !== undefined)) {
      const decision = await deps.adopter.adopt(resource, applier, observation, deps.ctx);
      lines.push(decision.line);
      if (!decision.take) { results[index] = { ...base, outcome: 'kept', detail: decision.line.detail }; continue; }
      records.push({ key, shape: resource.shape, digest, adopted: true, originalKeptAt: decision.originalKeptAt });
      results[index] = { ...base, outcome: 'unchanged', detail: `adopted: ${decision.line.detail}` };
      continue;
    }
    if (observation.unreadable !== undefined) {
      results[index] = { ...base, outcome: 'failed', detail: `could not read the machine: ${observation.unreadable}` };
      continue;
    }
    // A service that restarts on a file this batch is about to write is looked at again after it.
    if (observation.differences.length === 0 && !restartsOnPending(resource, pending)) {
      if (owned?.digest !== digest) records.push({ key, shape: resource.shape, digest, adopted: owned?.adopted, originalKeptAt: owned?.original_kept_at });
      results[index] = { ...base, outcome: 'unchanged' };
      continue;
    }
    pending.push({ index, resource, applier, key, digest, owned, first: observation });
  }

  // A key the host already owns needs no mark: whatever a kill leaves of its apply is the host's
  // (the file it wrote, or a temporary beside it, which the next host tidies), so a batch that
  // only changes what the host owns, as a new declaration mostly does, writes the store once.
  const marks = pending.filter((item) => item.owned === undefined).map((item) => item.key);
  const found = lines.length > 0 || records.length > 0 || marks.length > 0 ? committed(deps, { lines, records: [...records], mark: marks }) : undefined;
  records.length = 0;
  if (pending.length === 0) return { results: results.filter((r) => r !== undefined), owed: both(owed, found) };
  const firstWrite = both(both(owed, found), owedRestarts(pending, deps));
  if (firstWrite !== undefined) await recordAfterSyncs(firstWrite, deps);

  // Marked first, then prepared: a host killed while preparing leaves temporaries of keys it
  // has marked or already owns, which the next host tidies before it looks at them.
  const preparing = new Set(await prepareAhead(pending, deps));
  const changed = new BatchChanges();
  try {
    for (const [position, item] of pending.entries()) {
      if (position > 0 && position % BATCH === 0) await yieldToEventLoop();
      if (deps.ctx.signal?.aborted) break;
      const madeBefore = made.length;
      results[item.index] = await applyOne(item, deps, records, made, changed);
      // A directory made just now (declared, or on a file's way) gives the resources after it
      // in the batch somewhere to be prepared: before, their files had nowhere to be written
      // ahead, and each would have been written and synced alone.
      const madeDirectory = made.length > madeBefore || (item.resource.shape === 'directory' && !item.first.present && results[item.index]?.outcome === 'applied');
      if (madeDirectory && position + 1 < pending.length) {
        for (const applier of await prepareAhead(pending.slice(position + 1), deps)) preparing.add(applier);
      }
    }
  } finally {
    for (const applier of preparing) applier.discardPrepared?.(deps.ctx);
  }
  return { results: results.filter((r) => r !== undefined), owed: committed(deps, { lines: [], records, unmark: marks, made }) };
}

/**
 * Writes `change` to the store once the directories the work changed are synced (see
 * DirectorySyncBarrier), so the store never records a rename that a crash could still undo. The
 * directories' syncs and the store's own are issued side by side (see SaveOptions.after): the
 * store's new file is renamed into place only after the directories' syncs have returned.
 */
function recordAfterSyncs(change: StateChange, deps: ConvergeDeps): Promise<HostState> {
  const barrier = deps.ctx.barrier;
  return barrier === undefined || barrier.pending === 0 ? deps.state.update(change) : deps.state.update(change, { after: barrier.flush() });
}

/**
 * Restarts the services whose restart_on names a file the pass wrote after their turn (declared
 * after them, or in a later batch), and puts the outcome in place of their result: a service is
 * restarted after its files whatever order the declaration gives them in.
 */
async function restartOnLateFiles(declared: readonly Resource[], results: ResourceResult[], deps: ConvergeDeps): Promise<void> {
  const pass = deps.ctx.pass;
  const applier = applierFor(deps.appliers, 'service');
  if (pass === undefined || applier === undefined || pass.filesWritten.size === 0) return;
  for (const resource of declared) {
    if (resource.shape !== 'service' || resource.restart_on === undefined || pass.servicesRestarted.has(resource.name)) continue;
    const written = resource.restart_on.find((path) => pass.filesWritten.has(path));
    const at = results.findIndex((result) => result.key === resourceKey(resource));
    const outcome = results[at]?.outcome;
    if (written === undefined || at < 0 || (outcome !== 'unchanged' && outcome !== 'applied')) continue;
    const observed = await applier.observe(resource, deps.ctx).catch(() => undefined);
    if (observed === undefined || observed.differences.length === 0) continue;
    try {
      await applier.apply(resource, deps.ctx);
      results[at] = { key: resourceKey(resource), shape: 'service', outcome: 'applied', detail: observed.differences.join('; ') };
    } catch (error) {
      results[at] = { key: resourceKey(resource), shape: 'service', outcome: 'failed', detail: `restart after ${written} changed: ${messageOf(error)}` };
    }
  }
}

/**
 * Tells the pass which running services restart on which declared files, and which restarts an
 * earlier pass owed and did not carry out (HostState.restarts_owed).
 */
function noteRestartOn(declared: readonly Resource[], deps: ConvergeDeps): void {
  const pass = deps.ctx.pass;
  if (pass === undefined) return;
  for (const resource of declared) {
    if (resource.shape !== 'service' || resource.state !== 'running' || resource.restart_on === undefined) continue;
    for (const path of resource.restart_on) pass.restartOn.set(path, [...(pass.restartOn.get(path) ?? []), resource.name]);
  }
  for (const name of deps.state.current().restarts_owed ?? []) pass.restartsOwed.add(name);
}

/**
 * The services that restart on a file about to be written in this batch, recorded as owed a
 * restart in the store write made before any of the batch is applied: a host killed between
 * the file and the restart finds the file already as declared on its next pass, and only this
 * record says the service has not read it. Undefined when none is newly owed.
 */
function owedRestarts(pending: readonly PendingApply[], deps: ConvergeDeps): StateChange | undefined {
  const restartOn = deps.ctx.pass?.restartOn;
  if (restartOn === undefined || restartOn.size === 0) return undefined;
  const already = new Set(deps.state.current().restarts_owed ?? []);
  const owed = new Set(pending.flatMap((item) => (item.resource.shape === 'file' ? (restartOn.get(item.resource.path) ?? []) : [])).filter((name) => !already.has(name)));
  if (owed.size === 0) return undefined;
  return (s) => ({ ...s, restarts_owed: [...(s.restarts_owed ?? []), ...[...owed].filter((name) => !(s.restarts_owed ?? []).includes(name))] });
}

/**
 * Clears the restarts owed that this pass carried out (a service restarted or started after the
 * last write of its files), and, when `declared` is everything the host holds
 * (removeUndeclared: not an overlay declaration, which adds alone), those of services no longer
 * declared running with restart_on. One whose restart failed, or whose file could not be
 * written, stays owed: the next pass restarts it, at worst once more than needed, never once
 * too few.
 */
async function settleOwedRestarts(options: ConvergeOptions, deps: ConvergeDeps): Promise<void> {
  const pass = deps.ctx.pass;
  const owed = deps.state.current().restarts_owed;
  if (pass === undefined || owed === undefined) return;
  const declared = new Set([...pass.restartOn.values()].flat());
  const keep = owed.filter((name) => (declared.has(name) || !options.removeUndeclared) && !pass.servicesRestarted.has(name));
  if (keep.length === owed.length) return;
  await deps.state.update((s) => {
    const { restarts_owed: _cleared, ...rest } = s;
    const left = (s.restarts_owed ?? []).filter((name) => keep.includes(name) || !owed.includes(name));
    return left.length === 0 ? rest : { ...rest, restarts_owed: left };
  });
}

/** True for a service whose restart_on names a file already pending in this batch. */
function restartsOnPending(resource: Resource, pending: readonly PendingApply[]): boolean {
  if (resource.shape !== 'service' || resource.restart_on === undefined) return false;
  return resource.restart_on.some((path) => pending.some((item) => item.resource.shape === 'file' && item.resource.path === path));
}

/** `first` then `second`, as one change; either may be absent. */
function both(first: StateChange | undefined, second: StateChange | undefined): StateChange | undefined {
  if (first === undefined) return second;
  if (second === undefined) return first;
  return (state) => second(first(state));
}

/**
 * Lets each applier that can prepare do so for its resources about to be applied (see
 * Applier.prepare), and returns those appliers. A failure to prepare costs nothing but the
 * speed: each resource is then applied the usual way.
 */
async function prepareAhead(pending: readonly PendingApply[], deps: ConvergeDeps): Promise<Applier[]> {
  const byApplier = new Map<Applier, Resource[]>();
  for (const item of pending) {
    if (item.applier.prepare === undefined) continue;
    const resources = byApplier.get(item.applier) ?? [];
    resources.push(item.resource);
    byApplier.set(item.applier, resources);
  }
  for (const [applier, resources] of byApplier) await applier.prepare?.(resources, deps.ctx).catch(() => undefined);
  return [...byApplier.keys()];
}

/**
 * What the applies of one batch so far may have changed on the machine, so that a resource
 * about to be applied is looked at again only when an earlier one may have done its work: a
 * file or directory applied changes its own path and the directories it made; anything else (an
 * action, a package, a service, a container), or an apply that failed part way, may have
 * changed anything.
 */
class BatchChanges {
  private readonly paths = new Set<string>();
  private anything = false;

  applied(resource: Resource, madeDirectories: readonly string[]): void {
    if (resource.shape !== 'file' && resource.shape !== 'directory') {
      this.anything = true;
      return;
    }
    this.paths.add(resource.path);
    for (const directory of madeDirectories) this.paths.add(directory);
  }

  failed(): void {
    this.anything = true;
  }

  mayHaveChanged(resource: Resource): boolean {
    if (this.anything) return true;
    if (resource.shape === 'file' || resource.shape === 'directory') return this.paths.has(resource.path);
    return this.paths.size > 0;
  }
}

/** Applies one resource and reads it back; on success adds its record to `records`. */
async function applyOne(item: PendingApply, deps: ConvergeDeps, records: RecordEntry[], made: string[], changed: BatchChanges): Promise<ResourceResult> {
  const { resource, applier, key, digest, owned } = item;
  const base = { key, shape: resource.shape } as const;
  const entry: RecordEntry = { key, shape: resource.shape, digest, adopted: owned?.adopted, originalKeptAt: owned?.original_kept_at };
  // Look again when an earlier resource in this batch (a directory, an action) may have done it.
  // Otherwise the batch's first look stands: the apply itself still checks what is there, and
  // the read-back decides.
  const now: Observation = changed.mayHaveChanged(resource) ? await applier.observe(resource, deps.ctx).catch(() => item.first) : item.first;
  if (now.unreadable === undefined && now.differences.length === 0) {
    records.push(entry);
    return { ...base, outcome: 'unchanged' };
  }
  let output: string | undefined;
  try {
    const outcome = await applier.apply(resource, deps.ctx);
    output = outcome.output;
    made.push(...(outcome.madeDirectories ?? []));
    changed.applied(resource, outcome.madeDirectories ?? []);
  } catch (error) {
    changed.failed();
    return { ...base, outcome: 'failed', detail: messageOf(error) };
  }
  const readBack: Observation = await applier.observe(resource, deps.ctx).catch((error: unknown) => ({ present: false, differences: [`read-back failed: ${messageOf(error)}`] }));
  if (readBack.differences.length > 0 || readBack.unreadable !== undefined) {
    const why = readBack.unreadable ?? readBack.differences.join('; ');
    return { ...base, outcome: 'failed', detail: `applied, but reading back shows: ${why}`, ...(output === undefined ? {} : { output }) };
  }
  records.push(entry);
  if (resource.shape === 'file') deps.ctx.pass?.wroteFile(resource.path);
  return { ...base, outcome: 'applied', detail: now.differences.join('; '), ...(output === undefined ? {} : { output }) };
}

/**
 * Removes one batch of what the host owns and no longer declares, with two store writes however
 * many it holds (as an apply batch): first every key is moved from owned to applying, before
 * the machine is touched, so a host killed part way never claims to own something it already
 * deleted and still knows the leftovers are its own; then each is removed in order; then one
 * write clears the marks of what was removed and owns again what could not be.
 */
async function removeBatch(batch: readonly OwnedResource[], deps: ConvergeDeps): Promise<ResourceResult[]> {
  const results: ResourceResult[] = [];
  const removable: Array<{ entry: OwnedResource; applier: Applier }> = [];
  for (const entry of batch) {
    const applier = applierFor(deps.appliers, entry.shape);
    if (applier === undefined) {
      results.push({ key: entry.key, shape: entry.shape, outcome: 'failed', detail: `owned, but this host has no ${entry.shape} applier to remove it; still owned` });
    } else {
      removable.push({ entry, applier });
    }
  }
  if (removable.length === 0) return results;
  const keys = new Set(removable.map((item) => item.entry.key));
  const before = deps.state.current();
  const wasOwned = new Map(before.owned.resources.filter((r) => keys.has(r.key)).map((r) => [r.key, r]));
  await deps.state.update((s) => ({
    ...s,
    applying: [...s.applying, ...[...keys].filter((key) => !s.applying.includes(key))],
    owned: { resources: s.owned.resources.filter((r) => !keys.has(r.key)) },
  }));
  const settled: Array<{ key: string; undone: Undone }> = [];
  const ownAgain: OwnedResource[] = [];
  let stopped = false;
  for (const { entry, applier } of removable) {
    const base = { key: entry.key, shape: entry.shape } as const;
    // A pass cut short leaves the rest as it found them: still the host's, owned again below.
    if (stopped || deps.ctx.signal?.aborted) {
      stopped = true;
      const owned = wasOwned.get(entry.key);
      if (owned !== undefined) ownAgain.push(owned);
      continue;
    }
    // Adoption kept the machine's original: it is handed back, not removed; the adoption
    // machine decides (see hand-back.ts). A key not owned when the pass began was being undone
    // by a host that stopped: a copy no longer kept was put back then.
    const line = lineOf(before.briefing, entry.key);
    const keptAt = keptOriginalOf(line, entry.key, deps.ctx.stateDir);
    const undone = await handBackOrRemove(applier, entry.key, deps.ctx, { line, keptAt, resuming: !wasOwned.has(entry.key) });
    results.push({ ...base, outcome: undone.outcome, ...(undone.detail === undefined ? {} : { detail: undone.detail }) });
    if (undone.held) {
      // Still the host's: owned again if it was, else left marked so the next pass tries again.
      const owned = wasOwned.get(entry.key);
      if (owned !== undefined) ownAgain.push(owned);
    } else {
      settled.push({ key: entry.key, undone });
    }
  }
  const unmark = new Set([...settled.map((item) => item.key), ...ownAgain.map((entry) => entry.key)]);
  await recordAfterSyncs((s) => ({
    ...s,
    applying: s.applying.filter((key) => !unmark.has(key)),
    owned: ownAgain.length === 0 ? s.owned : { resources: [...s.owned.resources, ...ownAgain] },
    briefing: settled.reduce((briefing, item) => settledLine(briefing, item.key, item.undone), s.briefing),
  }), deps);
  return results;
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
  return REMOVAL_RANK[a.shape] - REMOVAL_RANK[b.shape] || byCodeUnits(a.key, b.key);
}

/**
 * Orders two keys or paths by their UTF-16 code units: the same order on every machine,
 * whatever its locale, and without localeCompare, whose first call loads ICU's collation data
 * (about 3 MB a host would then hold for as long as it runs).
 */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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

function ownedEntry(entry: RecordEntry, at: string): OwnedResource {
  return {
    key: entry.key,
    shape: entry.shape,
    digest: entry.digest,
    recorded_at: at,
    ...(entry.adopted ? { adopted: true } : {}),
    ...(entry.originalKeptAt === undefined ? {} : { original_kept_at: entry.originalKeptAt }),
  };
}

/**
 * The change one durable write makes: adoption lines into the briefing (replacing a line about
 * the same subject), records into what the host owns, and `applying` marks set or cleared.
 */
function committed(
  deps: ConvergeDeps,
  change: { lines: readonly BriefingLine[]; records: readonly RecordEntry[]; mark?: readonly string[]; unmark?: readonly string[]; made?: readonly string[] },
): StateChange {
  const at = utcTimestamp(deps.now());
  const recorded = new Map(change.records.map((entry) => [entry.key, ownedEntry(entry, at)]));
  const unmark = new Set([...(change.unmark ?? []), ...recorded.keys()]);
  return (s) => {
    let briefing = s.briefing;
    if (change.lines.length > 0) {
      const base = briefing ?? { node: deps.nodeName(), adopted_at: at, lines: [], look_at: [] };
      const subjects = new Set(change.lines.map((line) => line.subject));
      briefing = { ...base, lines: [...base.lines.filter((line) => !subjects.has(line.subject)), ...change.lines] };
    }
    briefing = resolveLines(briefing, recorded, deps.ctx.stateDir);
    const applying = s.applying.filter((key) => !unmark.has(key));
    for (const key of change.mark ?? []) if (!applying.includes(key)) applying.push(key);
    const resources = recorded.size === 0 ? s.owned.resources : [...s.owned.resources.filter((r) => !recorded.has(r.key)), ...recorded.values()];
    const newlyMade = (change.made ?? []).filter((directory) => !s.made_directories.includes(directory));
    const made_directories = newlyMade.length === 0 ? s.made_directories : [...s.made_directories, ...newlyMade];
    return { ...s, briefing, applying, owned: { resources }, made_directories };
  };
}

/**
 * Conflicts (lines that still say the host wrote nothing) about resources it has now applied and
 * recorded (in `recorded`) are resolved as the adoption machine decides (`conflict` on
 * `resource.applied`, see conflict.ts): the line says what the host did instead, and where the
 * machine's original was kept, the record becomes adopted, so that it is handed back when no
 * longer declared.
 */
function resolveLines(briefing: Briefing | null, recorded: Map<string, OwnedResource>, stateDir: string): Briefing | null {
  if (briefing === null || recorded.size === 0 || briefing.lines.every((line) => line.status === 'ok')) return briefing;
  const open = new Map(briefing.lines.filter((line) => line.status !== 'ok').map((line) => [line.subject, line]));
  const resolved = new Map<string, BriefingLine>();
  for (const [key, entry] of recorded) {
    const line = open.get(briefingSubject(key));
    if (line === undefined) continue;
    const decision = resolvedConflict(line, key, stateDir);
    resolved.set(line.subject, decision.line);
    const keptAt = decision.originalKeptAt;
    if (keptAt !== undefined) recorded.set(key, { ...entry, adopted: true, original_kept_at: keptAt });
  }
  if (resolved.size === 0) return briefing;
  return { ...briefing, lines: briefing.lines.map((line) => resolved.get(line.subject) ?? line) };
}

/**
 * The briefing once an undeclared resource is undone, as the adoption machine decided: its line
 * is gone when the host holds nothing of it any more (handed back, made by the host itself, or
 * an original that was gone), or says what became of it when a record of the machine's original
 * stays. Written with the batch's last store write, which also clears the key's mark.
 */
function settledLine(briefing: Briefing | null, key: string, undone: Undone): Briefing | null {
  const subject = briefingSubject(key);
  const next = undone.line;
  if (next === null) return withoutLines(briefing, (line) => line.subject === subject);
  if (briefing === null) return briefing;
  return { ...briefing, lines: briefing.lines.map((line) => (line.subject === subject ? { ...next, subject } : line)) };
}
