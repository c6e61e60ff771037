import { resourceDigest, resourceKey, type Resource } from '../../../schema/resource';
import type { ControllerContext } from '../controller-context';
import { composeFull } from '../declarations/compose-full';
import type { ComposedDeclaration } from '../declarations/compose-overlay';
import { sealModuleSecrets, type ModuleResources } from '../secrets/seal-for-node';
import { assignmentsOf, getRevision } from './modules.repo';
import { provisionFilesOf } from '../provisions/provision-files';

/** A node's full declaration with its modules, and which revision of each it carries. */
export interface ComposedWithModules {
  composed: ComposedDeclaration;
  /** Each module the declaration carries, at the version it carries. */
  modules: Record<string, string>;
}

/**
 * The resources of every module `node` runs, each at the revision its assignment names, in
 * module order (a file naming a secret carrying it sealed to the node), and which revision of
 * each that is. What a node's full declaration carries
 * beside its overlay and what `node declare` gave it.
 */
export async function moduleResourcesOf(ctx: Pick<ControllerContext, 'store' | 'config'>, node: string): Promise<{ modules: Record<string, string>; resources: Resource[] }> {
  const modules: Record<string, string> = {};
  const gathered: ModuleResources[] = [];
  // Each module's provision credential files go before its own resources, so a service of the
  // module that restarts on them (restart_on) comes after them in the pass.
  const credentials = await provisionFilesOf(ctx, node);
  for (const assignment of await assignmentsOf(ctx.store, node)) {
    const revision = await getRevision(ctx.store, assignment.module, assignment.version);
    if (revision === undefined) throw new Error(`node ${node} runs ${assignment.module} ${assignment.version}, which is not registered`);
    modules[assignment.module] = assignment.version;
    gathered.push({ module: assignment.module, resources: [...(credentials.get(assignment.module) ?? []), ...revision.resources] });
  }
  // A file naming a module's secret goes out only sealed to this node's live key.
  return { modules, resources: (await sealModuleSecrets(ctx, node, gathered)).flat() };
}

/**
 * Everything `node` should hold: its full declaration (the overlay and what `node declare` gave
 * it) and its modules' resources (moduleResourcesOf). A module resource the full declaration
 * already carries as it is (once the full composer adds modules itself) is not added twice; one
 * that differs under the same key is left in, so the declaration's own contract refuses the pair
 * rather than one of them being dropped.
 */
export async function composeWithModules(ctx: Pick<ControllerContext, 'store' | 'config'>, node: string): Promise<ComposedWithModules> {
  const base = await composeFull(ctx, node);
  const present = new Map(base.resources.map((resource) => [resourceKey(resource), resourceDigest(resource)]));
  const { modules, resources } = await moduleResourcesOf(ctx, node);
  const added = resources.filter((resource) => present.get(resourceKey(resource)) !== resourceDigest(resource));
  return { composed: { ...base, resources: [...base.resources, ...added] }, modules };
}
