import type { Resource } from '../../../schema/resource';
import type { ControllerContext } from '../controller-context';
import { composeOverlay, nodeState } from '../declarations/compose-overlay';
import { findCollision, type Declarer } from './find-collision';
import { ModuleCollision } from './module-errors';
import { assignmentsOf, getRevision, type ModuleRevision } from './modules.repo';
import { readSeatState, seatResources } from '../seats/compose-seats';

/**
 * How what a node is given would change: module revisions put on (new or replacing), modules
 * taken off, and what `node declare` gives it in place of what it gave before.
 */
export interface ModuleChange {
  put?: readonly ModuleRevision[];
  remove?: readonly string[];
  declared?: readonly Resource[];
}

/** The party name of a module revision in a collision: `module web 1.2`. */
export function moduleParty(revision: Pick<ModuleRevision, 'name' | 'version'>): { name: string; module: string } {
  return { name: `module ${revision.name} ${revision.version}`, module: revision.name };
}

/**
 * Everything that would declare resources on `node` after `change`: the overlay, what `node
 * declare` gave it, what the seats compose there (resolv.conf, a resolver holder's files), and each module it would run at its revision — the modules it runs now
 * first, in name order, then the ones put on.
 */
export async function nodeDeclarers(ctx: Pick<ControllerContext, 'store' | 'config'>, node: string, change: ModuleChange = {}): Promise<Declarer[]> {
  const state = await nodeState(ctx, node);
  const overlay = await composeOverlay(ctx, node);
  const put = new Map((change.put ?? []).map((revision) => [revision.name, revision]));
  const declarers: Declarer[] = [
    { party: { name: 'the overlay' }, resources: overlay.resources },
    { party: { name: 'node declare' }, resources: change.declared ?? state.declared_resources },
    { party: { name: 'the seats' }, resources: seatResources(node, await readSeatState(ctx.store), overlay.overlay?.names ?? [], state.profile) },
  ];
  for (const assignment of await assignmentsOf(ctx.store, node)) {
    if (change.remove?.includes(assignment.module)) continue;
    const revision = put.get(assignment.module) ?? (await getRevision(ctx.store, assignment.module, assignment.version));
    put.delete(assignment.module);
    if (revision !== undefined) declarers.push({ party: moduleParty(revision), resources: revision.resources });
  }
  for (const revision of put.values()) declarers.push({ party: moduleParty(revision), resources: revision.resources });
  return declarers;
}

/**
 * Refuses (ModuleCollision, naming both parties and the key) a change after which two parties
 * would declare one path, package, unit or container on `node`; `refused` says what was not done.
 */
export async function refuseCollisions(ctx: Pick<ControllerContext, 'store' | 'config'>, node: string, change: ModuleChange, refused: string): Promise<void> {
  const collision = findCollision(await nodeDeclarers(ctx, node, change));
  if (collision !== undefined) throw new ModuleCollision(node, collision.key, collision.parties, refused);
}
