import * as z from 'zod';
import { NodeName } from '../../../schema/primitives';
import type { ControllerPart } from '../serve/controller-parts';
import { formatIssuedToken } from './format-issued-token';
import { issueEnrolmentToken } from './issue-enrolment-token';
import { DEFAULT_TOKEN_TTL_MS, parseTtl } from './parse-ttl';
import { sweepExpiredTokens } from './sweep-expired-tokens';
import { TokenTargetAmbiguous, TokenTargetMissing } from './token-errors';

/** How often the serving controller removes the broker users of expired tokens. */
export const TOKEN_SWEEP_INTERVAL_MS = 30_000;

/** The arguments of `token.issue`, as `mesh-control token issue` sends them. */
export const TokenIssueArgs = z.strictObject({
  new: z.boolean().optional(),
  node: NodeName.optional(),
  ttl: z.string().optional(),
});

/**
 * Enrolment tokens: the verb `token.issue`, and a sweep every 30 s (and once at start) that
 * takes the broker users of expired tokens away.
 */
export const tokensPart: ControllerPart = {
  name: 'tokens',
  start: async (ctx, verbs) => {
    verbs.register('token.issue', TokenIssueArgs, async (callCtx, args) => {
      if (args.node !== undefined && args.new === true) throw new TokenTargetAmbiguous(args.node);
      if (args.node === undefined && args.new !== true) throw new TokenTargetMissing();
      const ttlMs = args.ttl === undefined ? DEFAULT_TOKEN_TTL_MS : parseTtl(args.ttl);
      const issued = await issueEnrolmentToken(callCtx, { forNode: args.node ?? null, ttlMs });
      return { result: issued, text: formatIssuedToken(issued) };
    });

    // One sweep at a time: a tick that finds one still running is skipped, not queued.
    let sweeping: Promise<void> | undefined;
    const sweep = (): void => {
      if (sweeping !== undefined) return;
      sweeping = sweepExpiredTokens(ctx, ctx.now())
        .then(
          () => undefined,
          (error: unknown) => ctx.log(`tokens: the expiry sweep failed and runs again in ${TOKEN_SWEEP_INTERVAL_MS / 1000} s: ${(error as Error)?.message ?? String(error)}`, { level: 'error' }),
        )
        .finally(() => {
          sweeping = undefined;
        });
    };
    sweep();
    const timer = setInterval(sweep, TOKEN_SWEEP_INTERVAL_MS);
    return {
      stop: async () => {
        clearInterval(timer);
        await sweeping;
      },
    };
  },
};
