import * as z from 'zod';
import { IsoTime } from './primitives';

/** A call id: sortable by when it started (base-36 milliseconds), then random. */
export const CallId = z.string().regex(/^[0-9a-z]{9}-[0-9a-f]{8}$/, { error: 'expected a call id like "mj2k9x1qz-3fa9c1d2"' });
/** See {@link CallId}. */
export type CallId = z.infer<typeof CallId>;

/**
 * What became of a call: still `running`; `answered` (the verb did what it was asked);
 * `refused` (an operator error: nothing or not all was done, and the error says why);
 * `failed` (a fault in the controller); `abandoned` (the controller answering it stopped first).
 */
export const CallState = z.enum(['running', 'answered', 'refused', 'failed', 'abandoned']);
/** See {@link CallState}. */
export type CallState = z.infer<typeof CallState>;

/**
 * One acting verb's call as the controller keeps it in the broker's KV bucket
 * `mesh-controller_calls` (the last 1,000, for 14 days), so `mesh-control calls ID` can say how
 * it ended after the CLI stopped waiting, and after the controller restarted. The arguments'
 * values are not kept (a later verb may carry a secret), only their names.
 */
export const ControlCall = z.strictObject({
  id: CallId,
  verb: z.string(),
  /** The names of the arguments it was called with. */
  args: z.array(z.string()),
  /** Who called, from the inbox its answer went to (`operator`). */
  caller: z.string(),
  /** The controller that answered it (`<hostname>:<pid>`), and that process's random instance. */
  controller: z.string(),
  instance: z.string(),
  /** The epoch the controller acted under; null if it had none. */
  epoch: z.number().int().nullable(),
  state: CallState,
  started_at: IsoTime,
  ended_at: IsoTime.nullable(),
  took_ms: z.number().min(0).nullable(),
  /** The answer, as the caller was given it; its text cut to fit 64 KiB when it was longer. */
  answer: z.strictObject({ text: z.string(), result: z.unknown(), truncated: z.boolean() }).nullable(),
  /** The refusal or fault, as the caller was given it. */
  error: z
    .strictObject({ condition: z.string(), what: z.string(), value: z.string().optional(), next: z.string(), retryable: z.boolean() })
    .nullable(),
});
/** See {@link ControlCall}. */
export type ControlCall = z.infer<typeof ControlCall>;
