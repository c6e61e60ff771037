import type { Condition, ConditionSilence } from '../../../schema/condition';

/**
 * A silence a person has just made, as the condition store hands it on once it is written: the
 * seam where a record of hand acts takes it (kept in the condition itself until then).
 */
export interface SilenceMade {
  /** The condition as it stands after the silence. */
  condition: Condition;
  silence: ConditionSilence;
  /** The silence it replaced, if one was still running. */
  previous: ConditionSilence | null;
}

/** Told of each silence made, after it is written; a failure is logged and does not undo the silence. */
export type OnSilenceMade = (made: SilenceMade) => Promise<void> | void;
