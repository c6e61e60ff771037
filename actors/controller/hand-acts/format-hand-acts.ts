import type { RepeatedCause } from './hand-acts.repo';
import type { HandActRecord } from './record-hand-act';

/** What `mesh-control hand-acts` answers. */
export interface HandActsListing {
  /** The window's start, ISO 8601. */
  since: string;
  /** The newest hand acts in the window, newest first, at most the limit asked. */
  acts: HandActRecord[];
  /** How many there are in the window, listed or not. */
  total: number;
  /** The causes given more than once in the window, most often first. */
  repeated: RepeatedCause[];
}

/** The listing for a person: the repeated causes first (what to make the mesh's own), then each act. */
export function formatHandActs(listing: HandActsListing): string {
  if (listing.total === 0) return `no hand acts since ${listing.since}`;
  const lines = [`hand acts since ${listing.since}: ${listing.total}${listing.acts.length < listing.total ? ` (the newest ${listing.acts.length} listed; --limit lists more)` : ''}`];
  if (listing.repeated.length === 0) {
    lines.push('repeated causes: none');
  } else {
    lines.push('repeated causes:');
    for (const cause of listing.repeated) {
      const on = cause.subjects.length === 0 ? '' : ` on ${cause.subjects.join(', ')}`;
      lines.push(`  ${cause.count}× ${cause.by === 'condition' ? `condition ${cause.cause}` : JSON.stringify(cause.cause)} — ${cause.verbs.join(', ')}${on}; ${cause.first_at} to ${cause.last_at}`);
    }
  }
  lines.push('acts:');
  for (const act of listing.acts) lines.push(`  ${formatHandAct(act)}`);
  return lines.join('\n');
}

/** One hand act in a line. */
export function formatHandAct(act: HandActRecord): string {
  const subject = act.subject === null ? '' : ` ${act.subject}`;
  const condition = act.condition === null ? '' : ` [condition ${act.condition}]`;
  return `${act.at} #${act.id} ${act.verb}${subject}${condition}: ${act.why === null ? '(no reason given)' : act.why}`;
}
