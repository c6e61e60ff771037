import { getRevision } from '../modules/modules.repo';
import type { Sql } from '../store/sql-store';
import type { StatusProblem } from '../../../schema/controller-status';
import { credentialsAcceptedBy, revisionProvisions } from './provisions.repo';

/** How one provider of one provision stands, as its node's latest report says. */
export interface ProviderStanding {
  provision: string;
  node: string;
  module: string;
  standing: 'failing' | 'well' | 'unreported';
  /** When the report it is read from was received; null before any. */
  since: string | null;
  /** The provider's services that failed, one line each, when failing. */
  failed: string[];
  /** The consumers it must serve: `module on node`. */
  consumers: string[];
}

/**
 * Every provider's standing. A provider says how it stands through its node's report: each
 * service its module declares is a probe the host runs every pass (is it running, did it start),
 * and a failed one in the node's latest report is the provider failing until a later report
 * has it applied or unchanged (recovered). No new field crosses the wire and the module needs no
 * bus credential of its own to speak; what it cannot tell is a provider running but broken.
 */
export async function providerStandings(sql: Sql): Promise<ProviderStanding[]> {
  const offers = await sql.query<{ node: string; module: string; version: string }>(
    `SELECT a.node, a.module, a.version FROM module_assignments a JOIN module_provisions p ON p.module = a.module AND p.version = a.version
     JOIN nodes n ON n.name = a.node WHERE n.lifecycle_state IN ('enrolled', 'disconnected') AND jsonb_array_length(p.provides) > 0 ORDER BY a.node, a.module`,
  );
  const standings: ProviderStanding[] = [];
  for (const offer of offers) {
    const revision = await getRevision(sql, offer.module, offer.version);
    const services = new Set((revision?.resources ?? []).filter((r) => r.shape === 'service').map((r) => (r.shape === 'service' ? `service:${r.name}` : '')));
    const [report] = await sql.query<{ results: unknown; received_at: Date }>(
      'SELECT results, received_at FROM reports WHERE node = $1 ORDER BY epoch DESC, sequence DESC, report_sequence DESC LIMIT 1',
      [offer.node],
    );
    const results = report === undefined ? [] : (typeof report.results === 'string' ? JSON.parse(report.results) : report.results) as Array<{ key: string; outcome: string; detail?: string }>;
    const failed = results.filter((result) => services.has(result.key) && result.outcome === 'failed').map((result) => `${result.key}${result.detail === undefined ? '' : `: ${result.detail}`}`);
    for (const provide of (await revisionProvisions(sql, offer.module, offer.version)).provides) {
      const consumers = (await credentialsAcceptedBy(sql, provide.provision, offer.node, offer.module)).map((row) => `${row.module} on ${row.node}`);
      standings.push({
        provision: provide.provision,
        node: offer.node,
        module: offer.module,
        standing: report === undefined ? 'unreported' : failed.length > 0 ? 'failing' : 'well',
        since: report === undefined ? null : new Date(report.received_at).toISOString(),
        failed,
        consumers,
      });
    }
  }
  return standings;
}

/** One status problem per failing provider, naming its consumers, until it recovers. */
export async function failingProviderProblems(sql: Sql): Promise<StatusProblem[]> {
  return (await providerStandings(sql))
    .filter((standing) => standing.standing === 'failing')
    .map((standing) => ({
      kind: 'provision',
      subject: `${standing.provision}@${standing.node}`,
      detail: `provider ${standing.module} on ${standing.node} of ${standing.provision} is failing (report of ${standing.since}): ${standing.failed.join('; ')}; its consumers: ${standing.consumers.length === 0 ? 'none yet' : standing.consumers.join(', ')}; it is named here until a report has its services running (mesh-control provisions)`,
    }));
}

/**
 * One status problem per node whose key died while credential files were sealed to it: each file
 * the mesh can no longer seal to it, until it enrols again (its next declaration then seals to
 * the new key). A released node is left out: it is not coming back.
 */
export async function unsealableCredentialProblems(sql: Sql): Promise<StatusProblem[]> {
  const rows = await sql.query<{ node: string; path: string }>(
    `SELECT s.node, s.path FROM provision_seals s JOIN dead_node_keys d ON d.public_key = s.public_key
     JOIN nodes n ON n.name = s.node WHERE n.lifecycle_state <> 'released' ORDER BY s.node, s.path`,
  );
  const byNode = new Map<string, string[]>();
  for (const row of rows) byNode.set(row.node, [...(byNode.get(row.node) ?? []), row.path]);
  return [...byNode].map(([node, paths]) => ({
    kind: 'provision',
    subject: node,
    detail: `the mesh can no longer seal provision credentials to node ${node}, whose key is dead: ${paths.join(', ')}; enrol it again (mesh-control token issue --node ${node}, then nox-mesh-host enrol --token …)`,
  }));
}
