import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { Declaration } from '../../../schema/declaration';
import type { HostState } from '../../../schema/host-state';
import type { OwnedResource } from '../../../schema/owned';
import { resourceKey, type Resource } from '../../../schema/resource';
import type { ApplyContext } from '../appliers/applier';
import { hostOwnPath } from '../appliers/root-path';
import { applierFor, type ApplierSet } from '../reconcile/applier-set';
import { messageOf } from '../../shared/message-of';
import { briefingSubject } from '../adoption/briefing-subject';
import type { AdmissionRules } from './admit-declaration';

/** An entry of `previously_owned` the host did not take, and why. */
export interface PassedOver {
  key: string;
  why: string;
}

/** What a rebuilt host took from the controller's copy of what it owned. */
export interface TakenBack {
  /** Entries the host owns from now on: undeclared ones are removed by the next pass. */
  taken: OwnedResource[];
  /** Entries left as they are on the machine. */
  passedOver: PassedOver[];
  /**
   * Keys adoption took since the store was rebuilt (the overlay comes first) that the host had
   * made itself before: they are its own again, not the machine's, so what adoption kept of
   * them (a copy of the host's own work) is dropped, and no longer declared they are removed,
   * not handed back.
   */
  reclaimed: OwnedResource[];
}

/** What deciding needs: the appliers (to look at a declared resource) and the admission rules. */
export interface TakeBackDeps {
  appliers: ApplierSet;
  ctx: ApplyContext;
  rules: Pick<AdmissionRules, 'shapes'>;
}

/**
 * Decides which entries of a declaration's `previously_owned` a host that rebuilt its store
 * takes as its own. The list is the controller's word, and whoever holds the signing key could
 * name anything in it, so it is bounded to what this host could have made and can see now:
 *
 * - only files and directories, inside the root, not the host's own state or unit, reached
 *   without a symbolic link anywhere on the way (none is followed), and there now as the kind
 *   the host makes (a regular file, a directory); a package or action is only forgotten when
 *   undeclared and a service or container cannot be looked at without its declaration, so
 *   nothing of those is taken;
 * - never what adoption took over from the machine (`adopted`): its original lived in the
 *   record that was lost, and removing it would destroy the machine's own;
 * - a declared key only when the machine already holds it as declared: taking it writes
 *   nothing, and anything else is adoption's to decide (the machine's value wins);
 * - nothing the store already holds (owned or marked): what the node says wins.
 *
 * An undeclared entry taken is owned, so the next pass removes it by the removal table
 * (a file unlinked, a directory removed only when empty).
 */
export async function takePreviouslyOwned(declaration: Declaration, state: HostState, deps: TakeBackDeps): Promise<TakenBack> {
  const taken: OwnedResource[] = [];
  const passedOver: PassedOver[] = [];
  const reclaimed: OwnedResource[] = [];
  const owned = new Map(state.owned.resources.map((entry) => [entry.key, entry]));
  const held = new Set([...owned.keys(), ...state.applying]);
  const declared = new Map(declaration.resources.map((resource) => [resourceKey(resource), resource]));
  for (const entry of declaration.previously_owned?.resources ?? []) {
    const adopted = owned.get(entry.key);
    if (adopted?.adopted === true && (await whyNot(entry, undefined, deps)) === undefined) reclaimed.push(adopted);
    if (held.has(entry.key)) continue;
    const why = await whyNot(entry, declared.get(entry.key), deps);
    if (why === undefined) {
      taken.push({ key: entry.key, shape: entry.shape, digest: entry.digest, recorded_at: entry.recorded_at });
    } else {
      passedOver.push({ key: entry.key, why });
    }
  }
  return { taken, passedOver, reclaimed };
}

async function whyNot(entry: OwnedResource, declared: Resource | undefined, deps: TakeBackDeps): Promise<string | undefined> {
  if (entry.adopted === true) return 'adoption took it over from the machine, and the record of its original was lost with the store: it is left as it is';
  if (!deps.rules.shapes.includes(entry.shape)) return `this host does not take ${entry.shape} resources`;
  if (entry.shape !== 'file' && entry.shape !== 'directory') {
    return declared === undefined
      ? `a ${entry.shape} cannot be looked at without its declaration, so the host takes nothing of it: left as it is`
      : 'declared: the pass applies it as any declared resource';
  }
  const path = entry.key.slice(entry.key.indexOf(':') + 1);
  const own = hostOwnPath(path, deps.ctx);
  if (own !== undefined) return own;
  const seen = lookWithoutLinks(deps.ctx.root, path);
  if (seen.kind === 'link') return `${seen.at} is a symbolic link, and the host follows none for what it is told it owned: left as it is`;
  if (seen.kind === 'absent') return declared === undefined ? 'not on the machine: nothing to remove' : 'not on the machine: the pass makes it as declared';
  if (seen.kind === 'unreadable') return `could not look at it (${seen.why}): left as it is`;
  if (seen.kind !== entry.shape) return `${seen.kind === 'other' ? 'something else' : `a ${seen.kind}`} is there now, not the ${entry.shape} the host made: left as it is`;
  if (declared === undefined) return undefined;
  const applier = applierFor(deps.appliers, declared.shape);
  if (applier === undefined) return `this host has no ${declared.shape} applier`;
  try {
    const observation = await applier.observe(declared, deps.ctx);
    if (observation.unreadable !== undefined) return `could not look at it (${observation.unreadable}): adoption decides`;
    if (observation.differences.length > 0) return `the machine's differs from the declaration (${observation.differences.join('; ')}): adoption decides`;
  } catch (error) {
    return `could not look at it (${messageOf(error)}): adoption decides`;
  }
  return undefined;
}

type Seen = { kind: 'file' | 'directory' | 'other' | 'absent' } | { kind: 'link'; at: string } | { kind: 'unreadable'; why: string };

/**
 * What is at `path` under `root`, looked at one component at a time with lstat: a symbolic link
 * anywhere on the way (or at the end) is reported, never followed. The root itself is taken as
 * its real path (a root may be reached through a link, as /tmp is on some machines).
 */
function lookWithoutLinks(root: string, path: string): Seen {
  let at: string;
  try {
    at = realpathSync(root);
  } catch (error) {
    return { kind: 'unreadable', why: messageOf(error) };
  }
  const segments = path.split('/').filter((segment) => segment !== '');
  let stats: Stats | undefined;
  let shown = '';
  for (const segment of segments) {
    at = join(at, segment);
    shown = `${shown}/${segment}`;
    try {
      stats = lstatSync(at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return { kind: 'absent' };
      return { kind: 'unreadable', why: messageOf(error) };
    }
    if (stats.isSymbolicLink()) return { kind: 'link', at: shown };
  }
  if (stats === undefined) return { kind: 'other' };
  return { kind: stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other' };
}

/**
 * The store once the declaration that was waited for is taken: what was taken back is owned
 * (never over what the store holds already), and the store is no longer marked rebuilt.
 */
export function withTakenBack(state: HostState, back: Pick<TakenBack, 'taken' | 'reclaimed'>): HostState {
  const { store_rebuilt_at: _done, ...rest } = state;
  const held = new Set([...state.owned.resources.map((entry) => entry.key), ...state.applying]);
  const fresh = back.taken.filter((entry) => !held.has(entry.key));
  // Reclaimed only while adoption's record is the one decided on (nothing changed it since).
  const reclaim = new Set(back.reclaimed.filter((entry) => state.owned.resources.some((r) => r.key === entry.key && r.adopted === true)).map((entry) => entry.key));
  if (fresh.length === 0 && reclaim.size === 0) return rest;
  const resources = state.owned.resources.map((entry) => (reclaim.has(entry.key) ? ownEntry(entry) : entry));
  const subjects = new Set([...reclaim].map(briefingSubject));
  const lines = state.briefing?.lines.filter((line) => !subjects.has(line.subject)) ?? [];
  const briefing = state.briefing === null || lines.length === state.briefing.lines.length ? state.briefing : lines.length === 0 ? null : { ...state.briefing, lines };
  return { ...rest, owned: { resources: [...resources, ...fresh] }, briefing };
}

/** What adoption kept of the reclaimed entries: the copies to delete once the store no longer points at them. */
export function keptCopiesOf(back: Pick<TakenBack, 'reclaimed'>): string[] {
  return back.reclaimed.flatMap((entry) => (entry.original_kept_at === undefined ? [] : [entry.original_kept_at]));
}

function ownEntry(entry: OwnedResource): OwnedResource {
  const { adopted: _adopted, original_kept_at: _kept, ...own } = entry;
  return own;
}

/** One log line: what was taken back, and what was passed over and why. */
export function describeTakenBack(back: TakenBack): string {
  const taken = back.taken.length === 0 ? 'nothing' : back.taken.map((entry) => entry.key).join(', ');
  const reclaimed = back.reclaimed.length === 0 ? '' : `; its own again, not the machine's: ${back.reclaimed.map((entry) => entry.key).join(', ')}`;
  const passed = back.passedOver.length === 0 ? '' : `; passed over ${back.passedOver.length}: ${back.passedOver.map((item) => `${item.key} (${item.why})`).join('; ')}`;
  return `store rebuilt: took back from the controller's copy of what this node owned ${taken}${reclaimed}${passed}; what is no longer declared is removed by the next pass`;
}
