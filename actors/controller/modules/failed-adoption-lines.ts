import { Briefing } from '../../../schema/briefing';
import type { Sql } from '../store/sql-store';
import type { FailedAdoptionLine } from './module-errors';

/**
 * The `failed` lines of the adoption briefing in the node's last kept report (by epoch, then
 * sequence, then report sequence): what keeps it from being given work. Empty when its last
 * report carries no briefing, or one without a failed line; a briefing the contract does not
 * accept is read as none, since the report it came in was checked on arrival.
 */
export async function failedAdoptionLines(sql: Sql, node: string): Promise<FailedAdoptionLine[]> {
  const [row] = await sql.query<{ briefing: unknown }>(
    'SELECT briefing FROM reports WHERE node = $1 ORDER BY epoch DESC, sequence DESC, report_sequence DESC LIMIT 1',
    [node],
  );
  if (row === undefined || row.briefing === null) return [];
  const briefing = Briefing.safeParse(row.briefing);
  if (!briefing.success) return [];
  return briefing.data.lines.filter((line) => line.status === 'failed').map((line) => ({ subject: line.subject, detail: line.detail }));
}
