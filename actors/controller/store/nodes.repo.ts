import type { Inventory } from '../../../schema/inventory';
import type { Owned } from '../../../schema/owned';
import type { Profile } from '../../../schema/profile';
import type { Sql } from './sql-store';

/**
 * A node record's state as the controller keeps it: `enrolled` (holds an identity, linked),
 * `disconnected` (holds an identity, not heard from lately), `revoked` (its identity revoked by
 * a re-enrolment token, waiting for the machine to enrol again), `released` (retired).
 */
export type NodeLifecycleState = 'enrolled' | 'disconnected' | 'revoked' | 'released';

/** One row of `nodes` (see migrations/0001_nodes.sql). */
export interface NodeRecord {
  name: string;
  lifecycle_state: NodeLifecycleState;
  public_key: string | null;
  nkey: string | null;
  profile: Profile | null;
  inventory: Inventory | null;
  version_running: string | null;
  last_seen_at: Date | null;
  owned: Owned | null;
  owned_at: Date | null;
  enrolled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * What to write for a node: its name and state, and any of the other fields to set. A field
 * left out keeps its stored value; a field given as null is cleared.
 */
export interface NodeChanges {
  name: string;
  lifecycle_state: NodeLifecycleState;
  public_key?: string | null;
  nkey?: string | null;
  profile?: Profile | null;
  inventory?: Inventory | null;
  version_running?: string | null;
  enrolled_at?: Date | null;
}

const COLUMNS = 'name, lifecycle_state, public_key, nkey, profile, inventory, version_running, last_seen_at, owned, owned_at, enrolled_at, created_at, updated_at';
const OPTIONAL = ['public_key', 'nkey', 'profile', 'inventory', 'version_running', 'enrolled_at'] as const;
const JSON_COLUMNS = new Set<string>(['profile', 'inventory']);

/**
 * Creates the node's record or updates it, in one statement (INSERT … ON CONFLICT), so two
 * writers for one new node cannot both create it. Returns the record as stored. The schema
 * refuses a state and identity that disagree: `enrolled` and `disconnected` hold a key pair,
 * `revoked` and `released` hold none.
 */
export async function upsertNode(sql: Sql, changes: NodeChanges, now: Date): Promise<NodeRecord> {
  const given = OPTIONAL.filter((column) => changes[column] !== undefined);
  const columns = ['name', 'lifecycle_state', ...given, 'created_at', 'updated_at'];
  const values: unknown[] = [changes.name, changes.lifecycle_state, ...given.map((column) => toParam(column, changes[column])), now, now];
  const placeholders = values.map((_, i) => `$${i + 1}`);
  const updates = ['lifecycle_state', ...given, 'updated_at'].map((column) => `${column} = excluded.${column}`);
  const [row] = await sql.query<NodeRecord>(
    `INSERT INTO nodes (${columns.join(', ')}) VALUES (${placeholders.join(', ')})
     ON CONFLICT (name) DO UPDATE SET ${updates.join(', ')}
     RETURNING ${COLUMNS}`,
    values,
  );
  return row as NodeRecord;
}

/**
 * Records that the node was heard from at `at`. Last seen never moves back, so a message
 * handled late cannot make a node look longer gone than it is. False when there is no such node.
 */
export async function recordLastSeen(sql: Sql, name: string, at: Date): Promise<boolean> {
  const rows = await sql.query('UPDATE nodes SET last_seen_at = GREATEST(last_seen_at, $2) WHERE name = $1 RETURNING name', [name, at]);
  return rows.length === 1;
}

/** The node's record, or undefined when there is none. */
export async function getNode(sql: Sql, name: string): Promise<NodeRecord | undefined> {
  const [row] = await sql.query<NodeRecord>(`SELECT ${COLUMNS} FROM nodes WHERE name = $1`, [name]);
  return row;
}

/** Every node record, by name. */
export function listNodes(sql: Sql): Promise<NodeRecord[]> {
  return sql.query<NodeRecord>(`SELECT ${COLUMNS} FROM nodes ORDER BY name`);
}

function toParam(column: string, value: unknown): unknown {
  return JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value;
}
