import * as z from 'zod';

/**
 * A CLI verb sent to the serving controller on `mesh.control.<verb>`. `args` carries exactly
 * the options the verb declares; the controller refuses any it does not declare, so a
 * mistyped or stale flag is never silently ignored.
 */
export const ControlRequest = z.strictObject({
  format: z.literal('mesh-control-1'),
  verb: z.string().regex(/^[a-z][a-z0-9-]*(?:\.[a-z][a-z0-9-]*)*$/, { error: 'expected a verb like "token.issue"' }),
  args: z.record(z.string(), z.unknown()),
});
/** See {@link ControlRequest}. */
export type ControlRequest = z.infer<typeof ControlRequest>;

/** The controller's answer: the verb's result (and its text for a person), or an operator error. */
export const ControlReply = z.discriminatedUnion('ok', [
  z.strictObject({ ok: z.literal(true), result: z.unknown(), text: z.string() }),
  z.strictObject({
    ok: z.literal(false),
    error: z.strictObject({
      condition: z.string(),
      what: z.string(),
      value: z.string().optional(),
      next: z.string(),
      retryable: z.boolean(),
    }),
  }),
]);
/** See {@link ControlReply}. */
export type ControlReply = z.infer<typeof ControlReply>;
