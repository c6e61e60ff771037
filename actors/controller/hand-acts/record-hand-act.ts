import os from 'node:os';
import type { ControllerContext } from '../controller-context';
import { isOperatorError } from '../../shared/operator-error';

/** Hand acts are kept this long: long enough to see a cause come back across seasons. */
export const HAND_ACTS_KEPT_MS = 365 * 24 * 3_600_000;

/** One hand act, as the verb that did it says it. */
export interface HandAct {
  /** The verb it was done through: `push`, `plans.close`, `conditions.silence`, `hand-act.record`… */
  verb: string;
  /** What it acted on (a node, `plan 4`, a condition's id); null for the whole mesh or nothing named. */
  subject: string | null;
  /** The person's reason, one line (see checkHandAct); null where the verb lets it be left out. */
  why: string | null;
  /** The condition it answers, when the person named one. */
  condition: string | null;
}

/** A hand act as kept. */
export interface HandActRecord extends HandAct {
  id: number;
  /** When it was recorded, ISO 8601 (the controller's clock). */
  at: string;
  /** The controller that recorded it, `<hostname>:<pid>`. */
  controller: string;
  /** The lease epoch it was done under; null when recorded while not acting. */
  epoch: number | null;
}

/** A row of `hand_acts` as the drivers return it. */
export interface HandActRow {
  id: string | number;
  at: Date | string;
  verb: string;
  subject: string | null;
  why: string | null;
  condition: string | null;
  controller: string;
  epoch: string | number | null;
}

/**
 * Records a hand act in the store, once the act itself was done (an act refused was not done
 * and is not recorded), and prunes those older than HAND_ACTS_KEPT_MS. Check the reason with
 * checkHandAct before acting. This is what every hand act calls, `conditions silence` included.
 */
export async function recordHandAct(ctx: Pick<ControllerContext, 'store' | 'now' | 'epoch'>, act: HandAct): Promise<HandActRecord> {
  const at = ctx.now();
  let epoch: number | null;
  try {
    epoch = ctx.epoch();
  } catch (error) {
    if (!isOperatorError(error)) throw error;
    epoch = null;
  }
  const [row] = await ctx.store.query<HandActRow>(
    `INSERT INTO hand_acts (at, verb, subject, why, condition, controller, epoch) VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING id, at, verb, subject, why, condition, controller, epoch`,
    [at, act.verb, act.subject, act.why, act.condition, `${os.hostname()}:${process.pid}`, epoch],
  );
  await ctx.store.query('DELETE FROM hand_acts WHERE at < $1', [new Date(at.getTime() - HAND_ACTS_KEPT_MS)]);
  if (row === undefined) throw new Error('the hand act was not returned by its insert');
  return handActOf(row);
}

/**
 * Records a hand act after its act was done, never failing the act: a record that cannot be
 * written is logged, and the line returned is for the verb to add to its answer, so the person
 * knows the act stands unrecorded (null when it was recorded).
 */
export async function keepHandAct(ctx: Pick<ControllerContext, 'store' | 'now' | 'epoch' | 'log'>, act: HandAct): Promise<string | null> {
  try {
    await recordHandAct(ctx, act);
    return null;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    ctx.log(`hand-acts: ${act.verb}${act.subject === null ? '' : ` ${act.subject}`} was done but could not be recorded: ${why}`, { level: 'error', verb: act.verb });
    return `(done, but not recorded as a hand act: ${why}; record it with mesh-control hand-act record --why TEXT)`;
  }
}

/** A row of `hand_acts` as a HandActRecord. */
export function handActOf(row: HandActRow): HandActRecord {
  return {
    id: Number(row.id),
    at: new Date(row.at).toISOString(),
    verb: row.verb,
    subject: row.subject,
    why: row.why,
    condition: row.condition,
    controller: row.controller,
    epoch: row.epoch === null ? null : Number(row.epoch),
  };
}
