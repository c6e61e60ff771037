import type { Briefing, BriefingLine, BriefingStatus } from '../../../schema/briefing';

/** The command a person runs once they have dealt with what a note names. */
export const RECONCILE_COMMAND = 'nox-mesh-host reconcile';

// A note names at most this many subjects, so it stays readable (and under the contract's
// 4096 characters: subjects are at most 120).
const NAMED = 5;

/**
 * The briefing's "what to look at": one note per kind of line that needs a person, worst
 * first, each saying what happened, what it means for the node, and the next step. Derived
 * from the lines alone, like the outcome, so the prose cannot disagree with them. A briefing
 * whose lines are all `ok` has nothing to look at.
 */
export function lookAtFor(lines: readonly BriefingLine[]): string[] {
  const notes: string[] = [];
  const failed = subjectsWith(lines, 'failed');
  if (failed.length > 0) {
    notes.push(
      `${count(failed.length)} failed: ${named(failed)}. The original could not be kept, so the host wrote nothing there, ` +
        `and this node is not given work until ${failed.length === 1 ? 'it is' : 'each is'} resolved. Fix what the line says (often space or permissions ` +
        `in the host's state directory), then run \`${RECONCILE_COMMAND}\`.`,
    );
  }
  const unknown = subjectsWith(lines, 'unknown');
  if (unknown.length > 0) {
    notes.push(
      `${count(unknown.length)} could not be read: ${named(unknown)}. Whether the machine matches the declaration is ` +
        'unknown, and nothing was kept or written. Check what the line says (permissions, a link leading elsewhere, a ' +
        `locked or damaged database), then run \`${RECONCILE_COMMAND}\`.`,
    );
  }
  const kept = subjectsWith(lines, 'kept');
  if (kept.length > 0) {
    notes.push(
      `The machine's value was kept for ${count(kept.length)}: ${named(kept)}. The declaration differs, the host wrote ` +
        "nothing, and the machine works as it did, so nothing is broken. To let the mesh's value win, either make the " +
        'machine match the declaration, or remove what the machine has there (a copy stays kept where the line says) so ' +
        `the next reconcile applies the declaration; then run \`${RECONCILE_COMMAND}\`. To keep the machine's value ` +
        'for good, change the module to declare what the machine has.',
    );
  }
  return notes;
}

/** The briefing with its "what to look at" derived afresh from its lines. */
export function withLookAt(briefing: Briefing): Briefing {
  return { ...briefing, look_at: lookAtFor(briefing.lines) };
}

function subjectsWith(lines: readonly BriefingLine[], status: BriefingStatus): string[] {
  return lines.filter((line) => line.status === status).map((line) => line.subject);
}

function count(n: number): string {
  return `${n} resource${n === 1 ? '' : 's'}`;
}

function named(subjects: readonly string[]): string {
  const shown = subjects.slice(0, NAMED).join(', ');
  return subjects.length > NAMED ? `${shown} and ${subjects.length - NAMED} more` : shown;
}
