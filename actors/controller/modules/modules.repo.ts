import type { DeclarationKind } from '../../../schema/declaration';
import type { UpgradePolicy } from '../../../schema/module';
import type { Resource } from '../../../schema/resource';
import type { Sql } from '../store/sql-store';

/** One registered revision of a module (migrations/0040_modules.sql). */
export interface ModuleRevision {
  name: string;
  version: string;
  /** 1 for the first revision registered, one more for each after: orders revisions as their versions. */
  seq: number;
  upgrade_policy: UpgradePolicy;
  resources: Resource[];
  digest: string;
  source: string | null;
  added_at: Date;
}

/** One module a node runs, at the revision its declarations carry. */
export interface ModuleAssignment {
  node: string;
  module: string;
  version: string;
  /** The revision's place in the module's order (ModuleRevision.seq). */
  seq: number;
  assigned_at: Date;
}

/** What one declaration sent with modules carried (module_sends). */
export interface ModuleSend {
  node: string;
  generation: number;
  /** Each module the declaration carried, at its version. */
  modules: Record<string, string>;
  resources_digest: string;
  sent_at: Date;
}

const REVISION_COLUMNS = 'name, version, seq, upgrade_policy, resources, digest, source, added_at';

/** The newest revision of `name`, or undefined when no module of that name is registered. */
export async function newestRevision(sql: Sql, name: string): Promise<ModuleRevision | undefined> {
  const [row] = await sql.query<ModuleRevision>(`SELECT ${REVISION_COLUMNS} FROM module_revisions WHERE name = $1 ORDER BY seq DESC LIMIT 1`, [name]);
  return row;
}

/** One revision of a module, or undefined. */
export async function getRevision(sql: Sql, name: string, version: string): Promise<ModuleRevision | undefined> {
  const [row] = await sql.query<ModuleRevision>(`SELECT ${REVISION_COLUMNS} FROM module_revisions WHERE name = $1 AND version = $2`, [name, version]);
  return row;
}

/** The newest revision of every registered module, by name. */
export function newestRevisions(sql: Sql): Promise<ModuleRevision[]> {
  return sql.query<ModuleRevision>(
    `SELECT DISTINCT ON (name) ${REVISION_COLUMNS} FROM module_revisions ORDER BY name, seq DESC`,
  );
}

/**
 * Registers a revision as the module's newest (its seq one above the highest). The caller has
 * checked that its version is higher than every registered one; two registrations racing for
 * one module are kept apart by the (name, seq) key, the loser failing whole.
 */
export async function insertRevision(sql: Sql, revision: Omit<ModuleRevision, 'seq'>): Promise<ModuleRevision> {
  const [row] = await sql.query<ModuleRevision>(
    `INSERT INTO module_revisions (name, version, seq, upgrade_policy, resources, digest, source, added_at)
     VALUES ($1, $2, COALESCE((SELECT max(seq) FROM module_revisions WHERE name = $1), 0) + 1, $3, $4, $5, $6, $7)
     RETURNING ${REVISION_COLUMNS}`,
    [revision.name, revision.version, revision.upgrade_policy, JSON.stringify(revision.resources), revision.digest, revision.source, revision.added_at],
  );
  if (row === undefined) throw new Error(`the revision ${revision.name} ${revision.version} was not stored`);
  return row;
}

const ASSIGNMENT_SELECT = `SELECT a.node, a.module, a.version, r.seq, a.assigned_at
  FROM module_assignments a JOIN module_revisions r ON r.name = a.module AND r.version = a.version`;

/** The modules `node` runs, by module name. */
export function assignmentsOf(sql: Sql, node: string): Promise<ModuleAssignment[]> {
  return sql.query<ModuleAssignment>(`${ASSIGNMENT_SELECT} WHERE a.node = $1 ORDER BY a.module`, [node]);
}

/** One module on one node, or undefined when the node does not run it. */
export async function getAssignment(sql: Sql, node: string, module: string): Promise<ModuleAssignment | undefined> {
  const [row] = await sql.query<ModuleAssignment>(`${ASSIGNMENT_SELECT} WHERE a.node = $1 AND a.module = $2`, [node, module]);
  return row;
}

/** The nodes running `module`, by node name, with the revision each carries. */
export function assignmentsOfModule(sql: Sql, module: string): Promise<ModuleAssignment[]> {
  return sql.query<ModuleAssignment>(`${ASSIGNMENT_SELECT} WHERE a.module = $1 ORDER BY a.node`, [module]);
}

/** Records that `node` runs `module` at `version` (or moves it there when it ran it already). */
export async function setAssignment(sql: Sql, node: string, module: string, version: string, at: Date): Promise<void> {
  await sql.query(
    `INSERT INTO module_assignments (node, module, version, assigned_at, updated_at) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (node, module) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
    [node, module, version, at],
  );
}

/** Forgets that `node` runs `module`. True when it did. */
export async function removeAssignment(sql: Sql, node: string, module: string): Promise<boolean> {
  const rows = await sql.query('DELETE FROM module_assignments WHERE node = $1 AND module = $2 RETURNING node', [node, module]);
  return rows.length > 0;
}

/** Records what a declaration sent to `node` carried. */
export async function recordModuleSend(sql: Sql, send: ModuleSend): Promise<void> {
  await sql.query(
    `INSERT INTO module_sends (node, generation, modules, resources_digest, sent_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (node, generation) DO NOTHING`,
    [send.node, send.generation, JSON.stringify(send.modules), send.resources_digest, send.sent_at],
  );
}

/**
 * The node's latest declaration and, when it was sent with modules, what it carried: the
 * declaration's generation, digest and time, and the module_sends row for it (undefined for a
 * declaration sent some other way: an overlay, a peer refresh, `node declare`). Undefined when
 * the node was never sent anything.
 */
export async function latestSend(sql: Sql, node: string): Promise<LatestSend | undefined> {
  const [row] = await sql.query<{ generation: number; digest: string; kind: DeclarationKind; sent_at: Date; modules: Record<string, string> | null; resources_digest: string | null; module_sent_at: Date | null }>(
    `SELECT d.generation, d.digest, d.kind, d.sent_at, m.modules, m.resources_digest, m.sent_at AS module_sent_at
     FROM declarations d LEFT JOIN module_sends m ON m.node = d.node AND m.generation = d.generation
     WHERE d.node = $1 ORDER BY d.generation DESC LIMIT 1`,
    [node],
  );
  if (row === undefined) return undefined;
  const modules =
    row.modules === null || row.resources_digest === null
      ? undefined
      : { node, generation: row.generation, modules: row.modules, resources_digest: row.resources_digest, sent_at: row.module_sent_at ?? row.sent_at };
  return { generation: row.generation, digest: row.digest, kind: row.kind, sent_at: row.sent_at, modules };
}

/** A node's latest declaration, and what it carried when it was sent with modules. */
export interface LatestSend {
  generation: number;
  digest: string;
  kind: DeclarationKind;
  sent_at: Date;
  modules: ModuleSend | undefined;
}
