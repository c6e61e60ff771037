import * as z from 'zod';
import { HandActConditionInvalid, HandActWhyInvalid, HandActWhyMissing } from './hand-act-errors';

/** The longest reason kept: a line, not a report. */
export const HAND_ACT_WHY_MAX = 500;

const CONDITION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * The arguments every hand act takes besides its own: why (the person's words) and the
 * condition it answers. Checked by {@link checkHandAct}, not here, so a bad value is refused
 * with a next step of its own rather than the registry's general one.
 */
export const HandActArgs = { why: z.string().optional(), condition: z.string().optional() };

/** A hand act's reason and condition, checked; null where not given. */
export interface HandActReason {
  why: string | null;
  condition: string | null;
}

/**
 * Checks `why` and `condition` before the act is done, so a refused reason leaves nothing done:
 * `why` trimmed must be one line of 1 to HAND_ACT_WHY_MAX characters (required when
 * `whyRequired`, naming `example` as the way to give it), `condition` the form of a
 * condition's id. Whether such a condition is open is not checked: the act stands either way.
 */
export function checkHandAct(verb: string, args: { why?: string | undefined; condition?: string | undefined }, whyRequired: false | { example: string }): HandActReason {
  let why: string | null = null;
  if (args.why !== undefined) {
    why = args.why.trim();
    if (why === '' || why.length > HAND_ACT_WHY_MAX || /[\r\n]/.test(why)) throw new HandActWhyInvalid(args.why, HAND_ACT_WHY_MAX);
  } else if (whyRequired !== false) {
    throw new HandActWhyMissing(verb, whyRequired.example);
  }
  let condition: string | null = null;
  if (args.condition !== undefined) {
    if (!CONDITION_ID.test(args.condition)) throw new HandActConditionInvalid(args.condition);
    condition = args.condition;
  }
  return { why, condition };
}
