import * as z from 'zod';
import { AbsolutePath, IsoTime, NodeName } from './primitives';

/** How one adoption line ended, from best to worst. */
export const BriefingStatus = z.enum(['ok', 'kept', 'unknown', 'failed']);
/** See {@link BriefingStatus}. */
export type BriefingStatus = z.infer<typeof BriefingStatus>;

/** One thing adoption found: what it is, how it ended, and where the machine's original went. */
export const BriefingLine = z.strictObject({
  status: BriefingStatus,
  subject: z.string().min(1).max(120, { error: 'a subject is at most 120 characters' }),
  detail: z.string().max(4096, { error: 'a detail is at most 4096 characters' }),
  original_kept_at: AbsolutePath.optional(),
});
/** See {@link BriefingLine}. */
export type BriefingLine = z.infer<typeof BriefingLine>;

/**
 * What the first apply over a machine in use found, took over and could not resolve. The host
 * writes it into its store and its reports; it is the first thing a person on a new node reads.
 *
 * There is deliberately no `outcome` field: the outcome is {@link briefingOutcome}, derived
 * from the worst line, so a briefing can never read fine while carrying a failed line.
 */
export const Briefing = z.strictObject(
  {
    node: NodeName,
    adopted_at: IsoTime,
    lines: z.array(BriefingLine),
    look_at: z.array(z.string().min(1).max(4096, { error: 'a note is at most 4096 characters' })),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys' && issue.keys.length === 1 && issue.keys[0] === 'outcome'
        ? 'a briefing does not store its outcome: it is derived from the worst line'
        : undefined,
  },
);
/** See {@link Briefing}. */
export type Briefing = z.infer<typeof Briefing>;

/** The briefing's outcome: its worst line (ok < kept < unknown < failed); `ok` when it has none. */
export function briefingOutcome(briefing: Pick<Briefing, 'lines'>): BriefingStatus {
  const rank = BriefingStatus.options;
  return briefing.lines.reduce<BriefingStatus>(
    (worst, line) => (rank.indexOf(line.status) > rank.indexOf(worst) ? line.status : worst),
    'ok',
  );
}

/**
 * The briefing as a person reads it: outcome, node and time, one line per finding, then what
 * to look at.
 */
export function formatBriefing(briefing: Briefing): string {
  const label = (name: string, value: string) => `${name.padEnd(11)}${value}`;
  const subjectWidth = Math.max(21, ...briefing.lines.map((line) => line.subject.length)) + 2;
  const lines = briefing.lines.map((line) => {
    const kept =
      line.original_kept_at !== undefined && !line.detail.includes(line.original_kept_at)
        ? `${line.detail === '' ? '' : '; '}original kept at ${line.original_kept_at}`
        : '';
    return indent(`${line.status.padEnd(9)}${line.subject.padEnd(subjectWidth)}${line.detail}${kept}`.trimEnd());
  });
  return [
    label('outcome', briefingOutcome(briefing)),
    label('node', briefing.node),
    label('adopted', briefing.adopted_at),
    '',
    ...(lines.length === 0 ? ['  (no lines)'] : lines),
    '',
    'what to look at',
    ...(briefing.look_at.length === 0 ? ['  nothing'] : briefing.look_at.map(indent)),
    '',
  ].join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
