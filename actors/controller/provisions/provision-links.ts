import type { ControllerContext } from '../controller-context';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { assignmentsOf, type ModuleRevision } from '../modules/modules.repo';
import { sendWithModules } from '../modules/send-with-modules';
import { messageOf } from '../../shared/message-of';
import { CredentialPathTaken, ProviderStillNeeded, ProvisionUnprovided } from './provision-errors';
import { nodeDeclarers } from '../modules/node-declarers';
import { credentialsOf, deleteCredential, modulesOffering, providersOf, revisionProvisions } from './provisions.repo';

/** What became of telling one provider (or consumer) node its new declaration. */
export interface NodeTold {
  node: string;
  generation: number | null;
  /** Why it was not sent, when it was not. */
  held: string | null;
}

/**
 * Refuses (ProvisionUnprovided, naming the provision and the modules that would provide it) the
 * assignment of `put` to `node` when a module of it consumes a provision no node of the mesh
 * provides, counting the modules put on this node in the same act.
 */
export async function refuseUnprovided(ctx: Pick<ControllerContext, 'store'>, node: string, put: readonly ModuleRevision[]): Promise<void> {
  const offeredHere = new Set<string>();
  const needs: Array<{ module: string; provision: string }> = [];
  for (const revision of put) {
    const { provides, consumes } = await revisionProvisions(ctx.store, revision.name, revision.version);
    for (const offer of provides) offeredHere.add(offer.provision);
    for (const need of consumes) needs.push({ module: revision.name, provision: need.provision });
  }
  for (const need of needs) {
    if (offeredHere.has(need.provision) || (await providersOf(ctx.store, need.provision)).length > 0) continue;
    throw new ProvisionUnprovided(node, need.module, need.provision, await modulesOffering(ctx.store, need.provision), 'nothing was assigned');
  }
}

/**
 * Refuses (CredentialPathTaken) putting `put` on `node` when a credential file of a module it
 * would run (a consumer's credential, a provider's accepted list) lands on a path another
 * credential file, or any resource of the node's declarers, declares: the declaration would
 * hold one path twice.
 */
export async function refuseCredentialPathCollisions(ctx: Pick<ControllerContext, 'store' | 'config'>, node: string, put: readonly ModuleRevision[]): Promise<void> {
  const declarers = await nodeDeclarers(ctx, node, { put });
  const taken = new Map<string, string>();
  for (const declarer of declarers) {
    for (const resource of declarer.resources) if (resource.shape === 'file' || resource.shape === 'directory') taken.set(resource.path, declarer.party.name);
  }
  const versions = new Map((await assignmentsOf(ctx.store, node)).map((assignment) => [assignment.module, assignment.version]));
  for (const revision of put) versions.set(revision.name, revision.version);
  for (const [module, version] of versions) {
    const { provides, consumes } = await revisionProvisions(ctx.store, module, version);
    for (const [what, file] of [...consumes.map((c) => [`the ${c.provision} credential of module ${module}`, c] as const), ...provides.map((o) => [`the ${o.provision} accepted list of module ${module}`, o] as const)]) {
      const other = taken.get(file.path);
      if (other !== undefined) throw new CredentialPathTaken(node, file.path, what, other);
      taken.set(file.path, what);
    }
  }
}

/** The provider nodes, other than `node`, that accept a credential held by `node`'s `modules`. */
export async function providerNodesOf(ctx: Pick<ControllerContext, 'store'>, node: string, modules: readonly string[]): Promise<string[]> {
  const rows = await ctx.store.query<{ provider_node: string }>(
    'SELECT DISTINCT provider_node FROM provision_credentials WHERE node = $1 AND module = ANY($2::text[]) AND provider_node <> $1 ORDER BY provider_node',
    [node, [...modules]],
  );
  return rows.map((row) => row.provider_node);
}

/**
 * Refuses taking `modules` off `node` while one of them is the last provider of a provision
 * other consumers hold credentials of (ProviderStillNeeded): they would be left accepted by
 * nothing, and their next declaration could not be composed.
 */
export async function refuseLastProviderRemoval(ctx: Pick<ControllerContext, 'store'>, node: string, modules: readonly string[]): Promise<void> {
  const leaving = new Set(modules);
  for (const module of modules) {
    const version = (await ctx.store.query<{ version: string }>('SELECT version FROM module_assignments WHERE node = $1 AND module = $2', [node, module]))[0]?.version;
    if (version === undefined) continue;
    for (const offer of (await revisionProvisions(ctx.store, module, version)).provides) {
      const others = (await providersOf(ctx.store, offer.provision)).filter((p) => !(p.node === node && leaving.has(p.module)));
      if (others.length > 0) continue;
      const consumers = (await credentialsOf(ctx.store, offer.provision)).filter((row) => !(row.node === node && leaving.has(row.module)));
      if (consumers.length > 0) throw new ProviderStillNeeded(node, module, offer.provision, consumers.map((row) => `${row.module} on ${row.node}`));
    }
  }
}

/** Forgets the credentials `node`'s `modules` held (they are taken off it). */
export async function forgetCredentialsOf(ctx: Pick<ControllerContext, 'store'>, node: string, modules: readonly string[]): Promise<void> {
  const rows = await ctx.store.query<{ provision: string; module: string }>('SELECT provision, module FROM provision_credentials WHERE node = $1 AND module = ANY($2::text[])', [node, [...modules]]);
  for (const row of rows) await deleteCredential(ctx.store, row.provision, node, row.module);
}

/**
 * Sends the providers of the credentials first issued to `node` since `since` (by composing
 * what a push or a plan sent it: a revision that began to consume) their new lists, so they
 * accept them now rather than at their own next send. Call it outside `node`'s work queue.
 */
export async function tellFreshProviders(ctx: ControllerContext, node: string, since: Date): Promise<NodeTold[]> {
  const rows = await ctx.store.query<{ provider_node: string }>(
    'SELECT DISTINCT provider_node FROM provision_credentials WHERE node = $1 AND version = 1 AND issued_at >= $2 AND provider_node <> $1 ORDER BY provider_node',
    [node, since],
  );
  return rows.length === 0 ? [] : tellNodes(ctx, rows.map((row) => row.provider_node));
}

/**
 * Sends each of `nodes` its full declaration now, each in its own work queue, one after another;
 * a node that cannot take it is said, not thrown, so one away provider holds back no other.
 */
export async function tellNodes(ctx: ControllerContext, nodes: readonly string[]): Promise<NodeTold[]> {
  const told: NodeTold[] = [];
  for (const node of nodes) {
    try {
      const outcome = await nodeWorkQueue(ctx).run(node, () => sendWithModules(ctx, node));
      told.push('sent' in outcome ? { node, generation: outcome.sent.generation, held: null } : { node, generation: null, held: outcome.held.reason });
    } catch (error) {
      told.push({ node, generation: null, held: messageOf(error) });
    }
  }
  return told;
}
