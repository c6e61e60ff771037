import type { HostState } from '../../../schema/host-state';
import { withLookAt } from './look-at';

/** The part of the host's state handle this needs (the real one is StateHandle). */
export interface BriefingState {
  current(): HostState;
  update(change: (state: HostState) => HostState): Promise<HostState>;
}

/**
 * Rewrites the stored briefing's "what to look at" from its lines. The reconcile engine records
 * adoption lines one at a time as it goes; the host calls this once after the pass, so the prose
 * a person reads describes every line the briefing now holds. Writes nothing when there is no
 * briefing or the prose is already current.
 */
export async function refreshLookAt(state: BriefingState): Promise<HostState> {
  const briefing = state.current().briefing;
  if (briefing === null || sameNotes(briefing.look_at, withLookAt(briefing).look_at)) return state.current();
  return state.update((current) => (current.briefing === null ? current : { ...current, briefing: withLookAt(current.briefing) }));
}

function sameNotes(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((note, index) => note === b[index]);
}
