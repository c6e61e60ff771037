import type { StatusProblem } from '../../../schema/controller-status';
import type { Sql } from '../store/sql-store';
import { sealsToDeadKeys } from './secrets.repo';

/**
 * One status problem per node whose key died while secrets were sealed to it: each item the mesh
 * can no longer seal to it, until it enrols again (its next declaration then seals to the new
 * key, and the problem goes). A released node is left out: it is not coming back.
 */
export async function unsealableProblems(sql: Sql): Promise<StatusProblem[]> {
  const released = new Set((await sql.query<{ name: string }>("SELECT name FROM nodes WHERE lifecycle_state = 'released'")).map((row) => row.name));
  const byNode = new Map<string, string[]>();
  for (const seal of await sealsToDeadKeys(sql)) {
    if (released.has(seal.node)) continue;
    const items = byNode.get(seal.node) ?? [];
    items.push(`${seal.module}/${seal.name} version ${Number(seal.version)} for ${seal.path}`);
    byNode.set(seal.node, items);
  }
  return [...byNode].map(([node, items]) => ({
    kind: 'secret',
    subject: node,
    detail: `the mesh can no longer seal to node ${node}, whose key is dead: ${items.join('; ')}; enrol it again (mesh-control token issue --node ${node}, then nox-mesh-host enrol --token …)`,
  }));
}
