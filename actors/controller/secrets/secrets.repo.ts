import type { Sql } from '../store/sql-store';

/** One secret as the store keeps it (migrations/0058_secrets.sql): encrypted, never the value. */
export interface SecretRow {
  module: string;
  name: string;
  version: number;
  ciphertext: string;
  key_id: string;
  bytes: number;
  set_at: Date;
}

/** A secret as sealed to one node's key (secret_seals). */
export interface SealRow {
  node: string;
  module: string;
  name: string;
  version: number;
  public_key: string;
  box: string;
  path: string;
}

const SECRET_COLUMNS = 'module, name, version, ciphertext, key_id, bytes, set_at';

/** One secret, or undefined when it is not set. */
export async function getSecret(sql: Sql, module: string, name: string): Promise<SecretRow | undefined> {
  const [row] = await sql.query<SecretRow>(`SELECT ${SECRET_COLUMNS} FROM secrets WHERE module = $1 AND name = $2`, [module, name]);
  return row === undefined ? undefined : { ...row, version: Number(row.version), bytes: Number(row.bytes) };
}

/** Every secret, or those of one module, by module then name. */
export async function listSecretRows(sql: Sql, module?: string): Promise<SecretRow[]> {
  const rows = module === undefined
    ? await sql.query<SecretRow>(`SELECT ${SECRET_COLUMNS} FROM secrets ORDER BY module, name`)
    : await sql.query<SecretRow>(`SELECT ${SECRET_COLUMNS} FROM secrets WHERE module = $1 ORDER BY name`, [module]);
  return rows.map((row) => ({ ...row, version: Number(row.version), bytes: Number(row.bytes) }));
}

/** How many secrets the store keeps under a key other than `keyId` (or any key, without one). */
export async function countSecretsNotUnder(sql: Sql, keyId: string | null): Promise<number> {
  const [row] = await sql.query<{ n: string | number }>('SELECT count(*) AS n FROM secrets WHERE $1::text IS NULL OR key_id <> $1', [keyId]);
  return Number(row?.n ?? 0);
}

/** Keeps `row` as the secret's newest version (one above the one kept, 1 when new). */
export async function upsertSecret(sql: Sql, row: Omit<SecretRow, 'version'> & { version: number }): Promise<void> {
  await sql.query(
    `INSERT INTO secrets (module, name, version, ciphertext, key_id, bytes, set_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (module, name) DO UPDATE SET version = excluded.version, ciphertext = excluded.ciphertext,
       key_id = excluded.key_id, bytes = excluded.bytes, set_at = excluded.set_at`,
    [row.module, row.name, row.version, row.ciphertext, row.key_id, row.bytes, row.set_at],
  );
}

/** Forgets a secret and every box sealed from it. True when it was set. */
export async function deleteSecret(sql: Sql, module: string, name: string): Promise<boolean> {
  await sql.query('DELETE FROM secret_seals WHERE module = $1 AND name = $2', [module, name]);
  const rows = await sql.query('DELETE FROM secrets WHERE module = $1 AND name = $2 RETURNING name', [module, name]);
  return rows.length > 0;
}

/** The boxes sealed for `node`. */
export function sealsOfNode(sql: Sql, node: string): Promise<SealRow[]> {
  return sql.query<SealRow>('SELECT node, module, name, version, public_key, box, path FROM secret_seals WHERE node = $1 ORDER BY module, name, path', [node]);
}

/** The boxes sealed to one node key (base64), as the items a dead key can no longer take. */
export function sealsToKey(sql: Sql, publicKey: string): Promise<SealRow[]> {
  return sql.query<SealRow>('SELECT node, module, name, version, public_key, box, path FROM secret_seals WHERE public_key = $1 ORDER BY module, name, path', [publicKey]);
}

/** Every seal whose key is recorded dead: what the mesh can no longer seal to, by node. */
export function sealsToDeadKeys(sql: Sql, module?: string): Promise<Array<SealRow & { died_at: Date; reason: string }>> {
  return sql.query(
    `SELECT s.node, s.module, s.name, s.version, s.public_key, s.box, s.path, d.died_at, d.reason
     FROM secret_seals s JOIN dead_node_keys d ON d.public_key = s.public_key
     WHERE $1::text IS NULL OR s.module = $1 ORDER BY s.module, s.name, s.node, s.path`,
    [module ?? null],
  );
}

/** Keeps the box sealed for one file of one node. */
export async function upsertSeal(sql: Sql, seal: SealRow): Promise<void> {
  await sql.query(
    `INSERT INTO secret_seals (node, module, name, version, public_key, box, path, sealed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, now())
     ON CONFLICT (node, module, name, path) DO UPDATE SET version = excluded.version, public_key = excluded.public_key,
       box = excluded.box, sealed_at = excluded.sealed_at`,
    [seal.node, seal.module, seal.name, seal.version, seal.public_key, seal.box, seal.path],
  );
}

/**
 * Forgets the boxes of `node` no longer declared (`keep` holds "module/name/path" of those that
 * are). Run only when the node was sealed to: a node whose key is dead keeps its boxes, as the
 * record of what it can no longer be sent, until it enrols again and is sealed to anew.
 */
export async function forgetStaleSeals(sql: Sql, node: string, keep: ReadonlySet<string>): Promise<void> {
  for (const seal of await sealsOfNode(sql, node)) {
    if (!keep.has(`${seal.module}/${seal.name}/${seal.path}`)) {
      await sql.query('DELETE FROM secret_seals WHERE node = $1 AND module = $2 AND name = $3 AND path = $4', [node, seal.module, seal.name, seal.path]);
    }
  }
}

/**
 * What was sealed to the node key whose broker user is `nkey`, once that key is recorded dead:
 * one line per item ("web/db-password version 2 for /etc/app/db-password"), which the mesh can
 * no longer seal to it. Empty when the key is not dead or held nothing sealed.
 */
export async function itemsSealedToDeadNkey(sql: Sql, nkey: string): Promise<string[]> {
  const rows = await sql.query<{ module: string; name: string; version: number | string; path: string }>(
    `SELECT s.module, s.name, s.version, s.path FROM secret_seals s JOIN dead_node_keys d ON d.public_key = s.public_key
     WHERE d.nkey = $1 ORDER BY s.module, s.name, s.path`,
    [nkey],
  );
  return rows.map((row) => `${row.module}/${row.name} version ${Number(row.version)} for ${row.path}`);
}
