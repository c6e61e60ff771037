import { ProvisionNeed, ProvisionOffer } from '../../../schema/provision';
import type { Sql } from '../store/sql-store';

/** A module revision's offers and needs as module_provisions keeps them (migrations/0061_provisions.sql). */
export interface RevisionProvisions {
  provides: ProvisionOffer[];
  consumes: ProvisionNeed[];
}

/** One consumer's credential as the store keeps it: encrypted, never the value. */
export interface CredentialRow {
  provision: string;
  node: string;
  module: string;
  provider_node: string;
  provider_module: string;
  version: number;
  ciphertext: string;
  key_id: string;
  issued_at: Date;
}

/** A provider on the mesh: a node running a module whose revision offers the provision. */
export interface ProviderOnMesh {
  node: string;
  module: string;
  offer: ProvisionOffer;
}

/** Keeps what a module revision offers and needs; nothing is kept for a revision with neither. */
export async function recordRevisionProvisions(sql: Sql, module: string, version: string, provisions: Partial<RevisionProvisions>): Promise<void> {
  const provides = provisions.provides ?? [];
  const consumes = provisions.consumes ?? [];
  if (provides.length === 0 && consumes.length === 0) return;
  await sql.query(
    `INSERT INTO module_provisions (module, version, provides, consumes) VALUES ($1, $2, $3, $4)
     ON CONFLICT (module, version) DO UPDATE SET provides = excluded.provides, consumes = excluded.consumes`,
    [module, version, JSON.stringify(provides), JSON.stringify(consumes)],
  );
}

/** What a module revision offers and needs (both empty when it says nothing of provisions). */
export async function revisionProvisions(sql: Sql, module: string, version: string): Promise<RevisionProvisions> {
  const [row] = await sql.query<{ provides: unknown; consumes: unknown }>('SELECT provides, consumes FROM module_provisions WHERE module = $1 AND version = $2', [module, version]);
  if (row === undefined) return { provides: [], consumes: [] };
  return { provides: ProvisionOffer.array().parse(jsonOf(row.provides)), consumes: ProvisionNeed.array().parse(jsonOf(row.consumes)) };
}

/**
 * Every provider of `provision` on the mesh: each node running (at its assigned revision) a
 * module that offers it, by node then module, nodes released or revoked left out.
 */
export async function providersOf(sql: Sql, provision: string): Promise<ProviderOnMesh[]> {
  const rows = await sql.query<{ node: string; module: string; provides: unknown }>(
    `SELECT a.node, a.module, p.provides FROM module_assignments a
     JOIN module_provisions p ON p.module = a.module AND p.version = a.version
     JOIN nodes n ON n.name = a.node
     WHERE n.lifecycle_state IN ('enrolled', 'disconnected')
     ORDER BY a.node, a.module`,
  );
  const found: ProviderOnMesh[] = [];
  for (const row of rows) {
    const offer = ProvisionOffer.array().parse(jsonOf(row.provides)).find((item) => item.provision === provision);
    if (offer !== undefined) found.push({ node: row.node, module: row.module, offer });
  }
  return found;
}

/** The modules registered (any revision) that offer `provision`: what a refusal names as a remedy. */
export async function modulesOffering(sql: Sql, provision: string): Promise<string[]> {
  const rows = await sql.query<{ module: string; provides: unknown }>('SELECT module, provides FROM module_provisions ORDER BY module, version');
  const names = rows.filter((row) => ProvisionOffer.array().parse(jsonOf(row.provides)).some((offer) => offer.provision === provision)).map((row) => row.module);
  return [...new Set(names)];
}

const CREDENTIAL_COLUMNS = 'provision, node, module, provider_node, provider_module, version, ciphertext, key_id, issued_at';

function credentialOf(row: CredentialRow): CredentialRow {
  return { ...row, version: Number(row.version) };
}

/** One consumer's credential, or undefined when none was issued. */
export async function getCredential(sql: Sql, provision: string, node: string, module: string): Promise<CredentialRow | undefined> {
  const [row] = await sql.query<CredentialRow>(`SELECT ${CREDENTIAL_COLUMNS} FROM provision_credentials WHERE provision = $1 AND node = $2 AND module = $3`, [provision, node, module]);
  return row === undefined ? undefined : credentialOf(row);
}

/** The credentials of `provision`, narrowed to one consumer node and/or module when given. */
export async function credentialsOf(sql: Sql, provision: string, narrow: { node?: string; module?: string } = {}): Promise<CredentialRow[]> {
  const rows = await sql.query<CredentialRow>(
    `SELECT ${CREDENTIAL_COLUMNS} FROM provision_credentials
     WHERE provision = $1 AND ($2::text IS NULL OR node = $2) AND ($3::text IS NULL OR module = $3) ORDER BY node, module`,
    [provision, narrow.node ?? null, narrow.module ?? null],
  );
  return rows.map(credentialOf);
}

/** The credentials a provider (node and module) accepts for `provision`, by consumer. */
export async function credentialsAcceptedBy(sql: Sql, provision: string, providerNode: string, providerModule: string): Promise<CredentialRow[]> {
  const rows = await sql.query<CredentialRow>(
    `SELECT ${CREDENTIAL_COLUMNS} FROM provision_credentials WHERE provision = $1 AND provider_node = $2 AND provider_module = $3 ORDER BY node, module`,
    [provision, providerNode, providerModule],
  );
  return rows.map(credentialOf);
}

/** Every credential issued, for `provisions` listings. */
export async function allCredentials(sql: Sql): Promise<CredentialRow[]> {
  return (await sql.query<CredentialRow>(`SELECT ${CREDENTIAL_COLUMNS} FROM provision_credentials ORDER BY provision, node, module`)).map(credentialOf);
}

/** Keeps a consumer's credential (a new one, or the next version of it). */
export async function upsertCredential(sql: Sql, row: CredentialRow): Promise<void> {
  await sql.query(
    `INSERT INTO provision_credentials (${CREDENTIAL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (provision, node, module) DO UPDATE SET provider_node = excluded.provider_node, provider_module = excluded.provider_module,
       version = excluded.version, ciphertext = excluded.ciphertext, key_id = excluded.key_id, issued_at = excluded.issued_at`,
    [row.provision, row.node, row.module, row.provider_node, row.provider_module, row.version, row.ciphertext, row.key_id, row.issued_at],
  );
}

/** Forgets one consumer's credential; true when there was one. */
export async function deleteCredential(sql: Sql, provision: string, node: string, module: string): Promise<boolean> {
  return (await sql.query('DELETE FROM provision_credentials WHERE provision = $1 AND node = $2 AND module = $3 RETURNING node', [provision, node, module])).length > 0;
}

/**
 * A credential a rotation replaced, still accepted by the consumer's provider until the
 * consumer reports the new one applied (provision_retiring_credentials).
 */
export interface RetiringCredentialRow {
  provision: string;
  node: string;
  module: string;
  version: number;
  ciphertext: string;
  key_id: string;
  superseded_at_generation: number;
}

const RETIRING_COLUMNS = 'provision, node, module, version, ciphertext, key_id, superseded_at_generation';

function retiringOf(row: RetiringCredentialRow): RetiringCredentialRow {
  return { ...row, version: Number(row.version), superseded_at_generation: Number(row.superseded_at_generation) };
}

/** Keeps `row`, about to be replaced, as still accepted beside its replacement. */
export async function keepRetiringCredential(sql: Sql, row: CredentialRow, supersededAtGeneration: number, at: Date): Promise<void> {
  await sql.query(
    `INSERT INTO provision_retiring_credentials (${RETIRING_COLUMNS}, superseded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (provision, node, module, version) DO NOTHING`,
    [row.provision, row.node, row.module, row.version, row.ciphertext, row.key_id, supersededAtGeneration, at],
  );
}

/** The replaced credentials of one consumer still accepted, oldest first. */
export async function retiringCredentialsOf(sql: Sql, provision: string, node: string, module: string): Promise<RetiringCredentialRow[]> {
  const rows = await sql.query<RetiringCredentialRow>(
    `SELECT ${RETIRING_COLUMNS} FROM provision_retiring_credentials WHERE provision = $1 AND node = $2 AND module = $3 ORDER BY version`,
    [provision, node, module],
  );
  return rows.map(retiringOf);
}

/** Every replaced credential still accepted on behalf of `node`'s consumers. */
export async function retiringCredentialsOnNode(sql: Sql, node: string): Promise<RetiringCredentialRow[]> {
  return (await sql.query<RetiringCredentialRow>(`SELECT ${RETIRING_COLUMNS} FROM provision_retiring_credentials WHERE node = $1 ORDER BY provision, module, version`, [node])).map(retiringOf);
}

/** Every replaced credential still accepted, for `provisions` listings. */
export async function allRetiringCredentials(sql: Sql): Promise<RetiringCredentialRow[]> {
  return (await sql.query<RetiringCredentialRow>(`SELECT ${RETIRING_COLUMNS} FROM provision_retiring_credentials ORDER BY provision, node, module, version`)).map(retiringOf);
}

/** Drops one consumer's replaced credentials superseded before `generation`; how many went. */
export async function dropRetiringCredentials(sql: Sql, provision: string, node: string, module: string, generation: number): Promise<number> {
  const rows = await sql.query(
    'DELETE FROM provision_retiring_credentials WHERE provision = $1 AND node = $2 AND module = $3 AND superseded_at_generation < $4 RETURNING version',
    [provision, node, module, generation],
  );
  return rows.length;
}

/** A credential file as sealed to one node's key (provision_seals). */
export interface ProvisionSealRow {
  node: string;
  path: string;
  sealed_for: string;
  public_key: string;
  box: string;
}

/** The kept box of one credential file of `node`, if any. */
export async function getProvisionSeal(sql: Sql, node: string, path: string): Promise<ProvisionSealRow | undefined> {
  const [row] = await sql.query<ProvisionSealRow>('SELECT node, path, sealed_for, public_key, box FROM provision_seals WHERE node = $1 AND path = $2', [node, path]);
  return row;
}

/** Keeps the box sealed for one credential file of one node. */
export async function upsertProvisionSeal(sql: Sql, seal: ProvisionSealRow): Promise<void> {
  await sql.query(
    `INSERT INTO provision_seals (node, path, sealed_for, public_key, box, sealed_at) VALUES ($1, $2, $3, $4, $5, now())
     ON CONFLICT (node, path) DO UPDATE SET sealed_for = excluded.sealed_for, public_key = excluded.public_key, box = excluded.box, sealed_at = excluded.sealed_at`,
    [seal.node, seal.path, seal.sealed_for, seal.public_key, seal.box],
  );
}

/** Forgets `node`'s kept boxes for credential files it no longer holds. */
export async function forgetProvisionSeals(sql: Sql, node: string, keep: ReadonlySet<string>): Promise<void> {
  for (const row of await sql.query<{ path: string }>('SELECT path FROM provision_seals WHERE node = $1', [node])) {
    if (!keep.has(row.path)) await sql.query('DELETE FROM provision_seals WHERE node = $1 AND path = $2', [node, row.path]);
  }
}

// PGlite returns jsonb parsed, a text cast would not be; accept both.
function jsonOf(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
