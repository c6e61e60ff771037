import type { BriefingLine } from '../../../schema/briefing';

// The briefing contract's limit on a line's detail.
const MAX_DETAIL = 4096;

/**
 * The briefing line about a resource once the host has applied and recorded it after adoption
 * left it alone (`kept`, `unknown` or `failed`: the host wrote nothing then). The host applies
 * such a resource only when the machine no longer has anything there (a person removed it to
 * let the declaration win, as the `kept` note suggests), so the line now says so, and is `ok`.
 * `keptAt` is where the machine's original was kept, when it was: the host then holds the
 * resource as adopted, and hands the original back when it is no longer declared.
 */
export function resolvedLine(line: BriefingLine, keptAt: string | undefined): BriefingLine {
  const before = `was ${line.status}`;
  if (keptAt === undefined) {
    return { status: 'ok', subject: line.subject, detail: `resolved (${before}): nothing of the machine's was there any more, so the host made it as declared; nothing was kept` };
  }
  return {
    status: 'ok',
    subject: line.subject,
    detail: (
      `resolved (${before}): the machine's value was no longer there, so the declaration was applied; adopted, the host owns it ` +
      `from now on and hands the original back when it is no longer declared; original kept at ${keptAt}`
    ).slice(0, MAX_DETAIL),
    original_kept_at: keptAt,
  };
}
