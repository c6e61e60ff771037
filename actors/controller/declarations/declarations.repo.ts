import type { DeclarationKind } from '../../../schema/declaration';
import type { InventoryAddress } from '../../../schema/inventory';
import type { Owned } from '../../../schema/owned';
import type { Profile } from '../../../schema/profile';
import type { Resource } from '../../../schema/resource';
import type { NodeLifecycleState } from '../store/nodes.repo';
import type { Sql } from '../store/sql-store';
import type { OverlayMember } from './overlay-for';

/**
 * What composing and sending a node's declarations reads from its record: its place on the
 * overlay, its profile, what was declared for it, and where it is in the order overlay → full
 * → final (see migrations/0030–0032).
 */
export interface NodeDeclarationState {
  name: string;
  lifecycle_state: NodeLifecycleState;
  wireguard_public_key: string | null;
  overlay_address: string | null;
  profile: Profile | null;
  declared_resources: Resource[];
  previously_owned: Owned | null;
  enrolled_at: Date | null;
  /** The last generation allotted; the next declaration takes one more. */
  declaration_generation: number;
  overlay_applied_generation: number | null;
  full_held: string | null;
  release_generation: number | null;
  release_held: string | null;
}

/** One row of `declarations`: the controller's account of a declaration it sent. */
export interface SentDeclaration {
  node: string;
  generation: number;
  epoch: number;
  kind: DeclarationKind;
  digest: string;
  sent_at: Date;
}

const STATE_COLUMNS = `name, lifecycle_state, wireguard_public_key, overlay_address, profile, declared_resources, previously_owned, enrolled_at,
  declaration_generation, overlay_applied_generation, full_held, release_generation, release_held`;

/** The node's declaration state, or undefined when there is no such node. */
export async function getNodeDeclarationState(sql: Sql, name: string): Promise<NodeDeclarationState | undefined> {
  const [row] = await sql.query<NodeDeclarationState>(`SELECT ${STATE_COLUMNS} FROM nodes WHERE name = $1`, [name]);
  return row;
}

/**
 * Every node on the overlay: holding an identity (enrolled or disconnected) with an address and
 * a WireGuard key. A revoked node is not a peer: its keys may be in a thief's hands.
 */
export function overlayMembers(sql: Sql): Promise<OverlayMember[]> {
  return sql.query<OverlayMember>(
    `SELECT name, overlay_address AS address, wireguard_public_key FROM nodes
     WHERE lifecycle_state IN ('enrolled', 'disconnected') AND overlay_address IS NOT NULL AND wireguard_public_key IS NOT NULL
     ORDER BY name`,
  );
}

/** A member of the overlay with the addresses its host reported (null when it reported none). */
export interface OverlayMemberRow extends OverlayMember {
  addresses: InventoryAddress[] | null;
}

/** {@link overlayMembers}, each with the addresses from its inventory, to choose its endpoint from. */
export function overlayMembersWithAddresses(sql: Sql): Promise<OverlayMemberRow[]> {
  return sql.query<OverlayMemberRow>(
    `SELECT name, overlay_address AS address, wireguard_public_key, inventory->'addresses' AS addresses FROM nodes
     WHERE lifecycle_state IN ('enrolled', 'disconnected') AND overlay_address IS NOT NULL AND wireguard_public_key IS NOT NULL
     ORDER BY name`,
  );
}

/** Takes the node's next generation, in one statement, so two senders never take the same one. */
export async function allotGeneration(sql: Sql, name: string): Promise<number> {
  const [row] = await sql.query<{ declaration_generation: number }>(
    'UPDATE nodes SET declaration_generation = declaration_generation + 1 WHERE name = $1 RETURNING declaration_generation',
    [name],
  );
  if (row === undefined) throw new Error(`no node record ${JSON.stringify(name)} to allot a generation for`);
  return row.declaration_generation;
}

/** Records a declaration as sent. */
export async function recordDeclaration(sql: Sql, sent: SentDeclaration): Promise<void> {
  await sql.query('INSERT INTO declarations (node, generation, epoch, kind, digest, sent_at) VALUES ($1, $2, $3, $4, $5, $6)', [
    sent.node, sent.generation, sent.epoch, sent.kind, sent.digest, sent.sent_at,
  ]);
}

/** Removes the record of a declaration that could not be published after all. */
export async function forgetDeclaration(sql: Sql, node: string, generation: number): Promise<void> {
  await sql.query('DELETE FROM declarations WHERE node = $1 AND generation = $2', [node, generation]);
}

/** The declaration sent to `node` as `generation`, or undefined when none was. */
export async function sentDeclaration(sql: Sql, node: string, generation: number): Promise<SentDeclaration | undefined> {
  const [row] = await sql.query<SentDeclaration>('SELECT node, generation, epoch, kind, digest, sent_at FROM declarations WHERE node = $1 AND generation = $2', [node, generation]);
  return row;
}

/** The declarations sent to `node`, oldest first. */
export function sentDeclarations(sql: Sql, node: string): Promise<SentDeclaration[]> {
  return sql.query<SentDeclaration>('SELECT node, generation, epoch, kind, digest, sent_at FROM declarations WHERE node = $1 ORDER BY generation', [node]);
}

/** True when a declaration of one of `kinds` was sent to `node` after `generation`. */
export async function sentAfter(sql: Sql, node: string, generation: number, kinds: readonly DeclarationKind[]): Promise<boolean> {
  const rows = await sql.query('SELECT 1 FROM declarations WHERE node = $1 AND generation > $2 AND kind = ANY($3::text[]) LIMIT 1', [node, generation, `{${kinds.join(',')}}`]);
  return rows.length > 0;
}

/** Keeps what a person declared for the node (parsed, defaults applied). */
export async function setDeclaredResources(sql: Sql, name: string, resources: readonly Resource[], at: Date): Promise<void> {
  await sql.query('UPDATE nodes SET declared_resources = $2, declared_at = $3, updated_at = $3 WHERE name = $1', [name, JSON.stringify(resources), at]);
}

/**
 * Records that the node applied the overlay sent as `generation`, and lifts any hold on its
 * full declaration. Returns true when this is the first overlay it applied since it enrolled:
 * the moment its full declaration may go.
 */
export async function markOverlayApplied(sql: Sql, name: string, generation: number, at: Date): Promise<boolean> {
  // The conditional UPDATE is the test: of two reports for the first overlay, one sets it.
  const first = await sql.query(
    'UPDATE nodes SET overlay_applied_generation = $2, full_held = NULL, updated_at = $3 WHERE name = $1 AND overlay_applied_generation IS NULL RETURNING name',
    [name, generation, at],
  );
  if (first.length === 1) return true;
  await sql.query(
    'UPDATE nodes SET overlay_applied_generation = GREATEST(overlay_applied_generation, $2), full_held = NULL, updated_at = $3 WHERE name = $1',
    [name, generation, at],
  );
  return false;
}

/** Says why the node's full declaration is held back (its overlay failed). */
export async function holdFull(sql: Sql, name: string, reason: string, at: Date): Promise<void> {
  await sql.query('UPDATE nodes SET full_held = $2, updated_at = $3 WHERE name = $1', [name, reason, at]);
}

/** Records that a release is under way: the final declaration went out as `generation`. */
export async function startRelease(sql: Sql, name: string, generation: number, at: Date): Promise<void> {
  await sql.query('UPDATE nodes SET release_generation = $2, release_held = NULL, updated_at = $3 WHERE name = $1', [name, generation, at]);
}

/** Says why the node's release has not finished (removing what it owned failed somewhere). */
export async function holdRelease(sql: Sql, name: string, reason: string, at: Date): Promise<void> {
  await sql.query('UPDATE nodes SET release_held = $2, updated_at = $3 WHERE name = $1', [name, reason, at]);
}

/** Forgets the owned copy kept from before a re-enrolment, once it has been handed back. */
export async function clearPreviouslyOwned(sql: Sql, name: string): Promise<void> {
  await sql.query('UPDATE nodes SET previously_owned = NULL WHERE name = $1', [name]);
}

/** Puts back the owned copy a send took, when that send could not be published. */
export async function restorePreviouslyOwned(sql: Sql, name: string, owned: Owned): Promise<void> {
  await sql.query('UPDATE nodes SET previously_owned = $2 WHERE name = $1 AND previously_owned IS NULL', [name, JSON.stringify(owned)]);
}

/** Puts the release state back as it was before a final declaration that could not be published. */
export async function restoreRelease(sql: Sql, name: string, generation: number | null, held: string | null): Promise<void> {
  await sql.query('UPDATE nodes SET release_generation = $2, release_held = $3 WHERE name = $1', [name, generation, held]);
}
