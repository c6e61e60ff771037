import { ENDED_PLAN_STATES, type PlanContext, type PlanState } from '../../../machines/plan.machine';
import type { UpgradePolicy } from '../../../schema/module';
import type { Sql } from '../store/sql-store';

/** One plan as the store keeps it (migrations/0041_plans.sql). */
export interface PlanRow {
  id: number;
  module: string;
  version: string;
  upgrade_policy: UpgradePolicy;
  state: PlanState;
  context: PlanContext;
  note: string | null;
  superseded_by: number | null;
  opened_at: Date;
  updated_at: Date;
  ended_at: Date | null;
  /** Raised by one with every write: the compare-and-set's witness. */
  revision: number;
  /** The lease epoch the last write was made under. */
  epoch: number;
}

const COLUMNS = 'id, module, version, upgrade_policy, state, context, note, superseded_by, opened_at, updated_at, ended_at, revision, epoch';

/**
 * Records a new plan, `opening`, its context already holding the policy, the nodes behind and
 * the first machine, so a controller that stops before the plan is taken up opens it from here.
 */
export async function insertPlan(
  sql: Sql,
  plan: { module: string; version: string; context: PlanContext; epoch: number; at: Date },
): Promise<PlanRow> {
  const [row] = await sql.query<PlanRow>(
    `INSERT INTO plans (module, version, upgrade_policy, state, context, opened_at, updated_at, epoch)
     VALUES ($1, $2, $3, 'opening', $4, $5, $5, $6) RETURNING ${COLUMNS}`,
    [plan.module, plan.version, plan.context.policy, JSON.stringify(plan.context), plan.at, plan.epoch],
  );
  if (row === undefined) throw new Error(`the plan for ${plan.module} ${plan.version} was not stored`);
  return row;
}

/**
 * Writes a plan's new state and context by compare-and-set: only when its revision is still
 * `revision` and it was last written under an epoch no higher than `epoch`. Returns the row as
 * written, or undefined when another writer (or a later controller) got there first, in which
 * case nothing changed.
 */
export async function writePlan(
  sql: Sql,
  id: number,
  revision: number,
  epoch: number,
  next: { state: PlanState; context: PlanContext; at: Date },
): Promise<PlanRow | undefined> {
  const ended = ENDED_PLAN_STATES.includes(next.state);
  const [row] = await sql.query<PlanRow>(
    `UPDATE plans SET state = $4, context = $5, note = $6, superseded_by = $7, updated_at = $8, ended_at = $9,
       revision = revision + 1, epoch = $3
     WHERE id = $1 AND revision = $2 AND epoch <= $3
     RETURNING ${COLUMNS}`,
    [id, revision, epoch, next.state, JSON.stringify(next.context), next.context.note, next.context.supersededBy, next.at, ended ? next.at : null],
  );
  return row;
}

/** One plan, or undefined. */
export async function getPlan(sql: Sql, id: number): Promise<PlanRow | undefined> {
  const [row] = await sql.query<PlanRow>(`SELECT ${COLUMNS} FROM plans WHERE id = $1`, [id]);
  return row;
}

/** Every plan that has not ended, oldest first. */
export function openPlans(sql: Sql): Promise<PlanRow[]> {
  return sql.query<PlanRow>(`SELECT ${COLUMNS} FROM plans WHERE ended_at IS NULL ORDER BY id`);
}

/** Plans newest first: the open ones, or with `all` every one, at most `limit`. */
export function listPlans(sql: Sql, options: { all: boolean; limit: number }): Promise<PlanRow[]> {
  return sql.query<PlanRow>(
    `SELECT ${COLUMNS} FROM plans ${options.all ? '' : 'WHERE ended_at IS NULL'} ORDER BY id DESC LIMIT $1`,
    [options.limit],
  );
}
