import type { Sql } from '../store/sql-store';
import { handActOf, type HandActRecord, type HandActRow } from './record-hand-act';

/** A cause that came back: the hand acts that named the same condition, or gave the same reason. */
export interface RepeatedCause {
  /** `condition` when they named one condition; `why` when they gave the same reason, told apart by words alone. */
  by: 'condition' | 'why';
  /** The condition's id, or the reason as first given. */
  cause: string;
  count: number;
  /** The verbs it was done through, sorted. */
  verbs: string[];
  /** What it acted on, sorted (the whole mesh left out). */
  subjects: string[];
  first_at: string;
  last_at: string;
}

/** The newest `limit` hand acts recorded at or after `since`, newest first. */
export async function listHandActs(sql: Sql, since: Date, limit: number): Promise<HandActRecord[]> {
  const rows = await sql.query<HandActRow>(
    `SELECT id, at, verb, subject, why, condition, controller, epoch FROM hand_acts
     WHERE at >= $1 ORDER BY at DESC, id DESC LIMIT $2`,
    [since, limit],
  );
  return rows.map(handActOf);
}

/**
 * The causes given more than once since `since`, most often first. A hand act naming a
 * condition counts under that condition whatever it said; one naming none counts under its
 * reason, compared without case and with runs of spaces and a closing full stop taken away,
 * so "Consumer gone." and "consumer  gone" are one cause. Acts without a reason name no cause.
 */
export async function repeatedCauses(sql: Sql, since: Date): Promise<RepeatedCause[]> {
  const rows = await sql.query<{ by: 'condition' | 'why'; cause: string; count: string | number; verbs: string[]; subjects: string[]; first_at: Date | string; last_at: Date | string }>(
    `WITH acts AS (
       SELECT id, at, verb, subject, why, condition,
              CASE WHEN condition IS NOT NULL THEN 'condition' ELSE 'why' END AS by,
              CASE WHEN condition IS NOT NULL THEN condition
                   ELSE regexp_replace(regexp_replace(lower(btrim(why)), '\\s+', ' ', 'g'), '[ .]+$', '') END AS cause_key
       FROM hand_acts
       WHERE at >= $1 AND (condition IS NOT NULL OR why IS NOT NULL)
     )
     SELECT by,
            (array_agg(CASE WHEN by = 'condition' THEN condition ELSE why END ORDER BY at, id))[1] AS cause,
            count(*) AS count,
            array_agg(DISTINCT verb ORDER BY verb) AS verbs,
            array_remove(array_agg(DISTINCT subject ORDER BY subject), NULL) AS subjects,
            min(at) AS first_at, max(at) AS last_at
     FROM acts
     GROUP BY by, cause_key
     HAVING count(*) > 1
     ORDER BY count(*) DESC, max(at) DESC`,
    [since],
  );
  return rows.map((row) => ({
    by: row.by,
    cause: row.cause,
    count: Number(row.count),
    verbs: row.verbs,
    subjects: row.subjects,
    first_at: new Date(row.first_at).toISOString(),
    last_at: new Date(row.last_at).toISOString(),
  }));
}

/** How many hand acts were recorded at or after `since` (status counts the week's). */
export async function countHandActs(sql: Sql, since: Date): Promise<number> {
  const [row] = await sql.query<{ count: string | number }>('SELECT count(*) AS count FROM hand_acts WHERE at >= $1', [since]);
  return Number(row?.count ?? 0);
}
