import type { ControllerContext } from '../controller-context';
import { assignmentsOfModule, getRevision } from '../modules/modules.repo';
import { tellNodes, type NodeTold } from '../provisions/provision-links';

/**
 * Sends every node running a revision of `module` whose files name the secret `name` its
 * declaration now, so a new version reaches them without a push by hand; a node that cannot take
 * it now is said, and gets it with its next declaration. The others are sent nothing.
 */
export async function sendSecretUsers(ctx: ControllerContext, module: string, name: string): Promise<NodeTold[]> {
  const nodes: string[] = [];
  for (const assignment of await assignmentsOfModule(ctx.store, module)) {
    const revision = await getRevision(ctx.store, module, assignment.version);
    if (revision?.resources.some((resource) => resource.shape === 'file' && 'secret' in resource.content && resource.content.secret === name) === true) nodes.push(assignment.node);
  }
  return tellNodes(ctx, nodes);
}
