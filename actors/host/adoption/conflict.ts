import { transition } from 'xstate';
import type { BriefingLine } from '../../../schema/briefing';
import type * as AdoptionMachine from '../../../machines/adoption.machine';
import type { AdoptionInput, AdoptionOutcome, ReleaseOutcome } from '../../../machines/adoption.machine';
import { originalsDirFor } from './originals-dir';

// A conflict (a `kept`, `unknown` or `failed` line: the host wrote nothing) rests in the store
// as its briefing line. What becomes of it is the adoption machine's decision, from `conflict`
// on `resource.applied` (resolved: the host applied the declaration after all) or
// `resource.released` (no longer declared). Neither path invokes anything, so the machine is
// stepped with xstate's pure `transition`, inside the store write that records the change.

function machine(): typeof AdoptionMachine {
  // Loaded only when a conflict is met, like hand-back.ts: a host at rest never needs it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../../machines/adoption.machine') as typeof AdoptionMachine;
}

function restored(line: BriefingLine, input: AdoptionInput) {
  const { adoptionMachine, conflictSnapshotContext, conflictStateOf } = machine();
  const value = conflictStateOf(line.status);
  if (value === undefined) throw new Error(`the line about ${line.subject} is not a conflict (it is ${line.status})`);
  return adoptionMachine.resolveState({ value, context: conflictSnapshotContext(input, line) });
}

/**
 * What a conflict about `key` comes to once the host has applied and recorded it: its new line
 * (`ok`, "resolved"), and where the machine's original was kept when the host now holds the
 * resource as adopted (handed back when no longer declared).
 */
export function resolvedConflict(line: BriefingLine, key: string, stateDir: string): AdoptionOutcome {
  const { adoptionMachine } = machine();
  const input = { subject: line.subject, originalsDir: originalsDirFor(stateDir, key) };
  const [next] = transition(adoptionMachine, restored(line, input), { type: 'resource.applied' });
  if (next.context.decision === null) throw new Error(`the adoption machine left the conflict about ${line.subject} without a decision`);
  return next.context.decision;
}

/**
 * What a conflict comes to once its resource is no longer declared and the host holds nothing
 * of it: its line goes, and the copy kept for it is to be deleted (`forgetOriginalAt`), first.
 */
export function droppedConflict(line: BriefingLine, stateDir: string): ReleaseOutcome {
  const { adoptionMachine, isReleaseOutcome } = machine();
  const input = { subject: line.subject, originalsDir: originalsDirFor(stateDir, line.subject) };
  const [next] = transition(adoptionMachine, restored(line, input), { type: 'resource.released', resuming: false });
  const output = next.output;
  if (output === undefined || !isReleaseOutcome(output)) throw new Error(`the adoption machine did not let the conflict about ${line.subject} go`);
  return output;
}
