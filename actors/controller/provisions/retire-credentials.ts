import type { Report } from '../../../schema/report';
import type { ControllerContext } from '../controller-context';
import { sentDeclaration } from '../declarations/declarations.repo';
import { assignmentsOf } from '../modules/modules.repo';
import { tellNodes, type NodeTold } from './provision-links';
import { dropRetiringCredentials, getCredential, retiringCredentialsOnNode, revisionProvisions } from './provisions.repo';

/** What a consumer's report let go of: the replaced credentials its provider no longer accepts. */
export interface Retired {
  /** `module/provision`, one for each consumer whose old credentials were dropped. */
  consumers: string[];
  /** The providers sent their list without them. */
  told: NodeTold[];
}

/**
 * Drops the credentials a rotation replaced for the consumers of `report.node` whose report
 * shows the new one applied: the report answers a declaration this controller sent after the
 * rotation (same generation and digest, a generation above the one recorded at rotation), and
 * its result for the consumer's credential file is applied or unchanged. Their providers are
 * then sent their lists without the old ones. A report that refused the declaration, or whose
 * file failed or was kept, drops nothing: the provider goes on accepting both.
 *
 * Call outside the node's work queue: a provider on the same node is sent through it.
 */
export async function retireConfirmedCredentials(ctx: ControllerContext, report: Report): Promise<Retired> {
  const none: Retired = { consumers: [], told: [] };
  if (report.refused !== undefined) return none;
  const retiring = (await retiringCredentialsOnNode(ctx.store, report.node)).filter((row) => row.superseded_at_generation < report.generation);
  if (retiring.length === 0) return none;
  const sent = await sentDeclaration(ctx.store, report.node, report.generation);
  if (sent === undefined || sent.digest !== report.declaration_digest) return none;
  const outcomes = new Map(report.results.map((result) => [result.key, result.outcome]));
  const assignments = await assignmentsOf(ctx.store, report.node);
  const consumers: string[] = [];
  const providers = new Set<string>();
  for (const consumer of new Set(retiring.map((row) => `${row.module}/${row.provision}`))) {
    const [module, provision] = consumer.split('/') as [string, string];
    const assignment = assignments.find((a) => a.module === module);
    if (assignment === undefined) continue;
    const need = (await revisionProvisions(ctx.store, module, assignment.version)).consumes.find((c) => c.provision === provision);
    const outcome = need === undefined ? undefined : outcomes.get(`file:${need.path}`);
    if (outcome !== 'applied' && outcome !== 'unchanged') continue;
    if ((await dropRetiringCredentials(ctx.store, provision, report.node, module, report.generation)) === 0) continue;
    consumers.push(consumer);
    const current = await getCredential(ctx.store, provision, report.node, module);
    if (current !== undefined) providers.add(current.provider_node);
  }
  if (consumers.length === 0) return none;
  ctx.log(`provisions: node ${report.node} applied its new credential(s) (${consumers.join(', ')}); the old ones are no longer accepted`, { level: 'info', node: report.node });
  const told = await tellNodes(ctx, [...providers].sort());
  return { consumers, told };
}
