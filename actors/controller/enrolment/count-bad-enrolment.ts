import type { ControllerContext } from '../controller-context';

/** How many malformed requests a token survives; the next one spends it. */
export const BAD_ENROLMENTS_BEFORE_SPENT = 5;

/** What counting one more bad request did to its token. */
export interface BadEnrolmentCount {
  /** The token's count of bad requests now; 0 when the token is used, expired or unknown. */
  count: number;
  /** True when this request spent the token: its expiry is now and its broker user must go. */
  spent: boolean;
}

/**
 * Counts one malformed, badly signed or unanswerable request against an open token, and spends
 * the token (its expiry brought to now, so every later request is refused as expired and the
 * sweep keeps its user off the broker) once BAD_ENROLMENTS_BEFORE_SPENT are counted. A used or
 * expired token is left alone: it can enrol nothing more anyway.
 */
export async function countBadEnrolment(ctx: ControllerContext, tokenId: string): Promise<BadEnrolmentCount> {
  const now = ctx.now();
  const rows = await ctx.store.query<{ malformed_requests: number }>(
    `UPDATE tokens SET malformed_requests = malformed_requests + 1
       WHERE id = $1 AND consumed_at IS NULL AND expires_at > $2
       RETURNING malformed_requests`,
    [tokenId, now],
  );
  const count = rows[0]?.malformed_requests ?? 0;
  if (count < BAD_ENROLMENTS_BEFORE_SPENT) return { count, spent: false };
  // Never before its issue: the table requires a token to expire after it was issued.
  const spent = await ctx.store.query<{ id: string }>(
    `UPDATE tokens SET expires_at = GREATEST($2::timestamptz, issued_at + interval '1 millisecond')
       WHERE id = $1 AND consumed_at IS NULL AND expires_at > $2
       RETURNING id`,
    [tokenId, now],
  );
  return { count, spent: spent.length > 0 };
}
