import * as z from 'zod';
import { NodeName } from '../../../schema/primitives';
import type { ControllerPart } from '../serve/controller-parts';
import { checkHandAct } from '../hand-acts/hand-act-args';
import { keepHandAct } from '../hand-acts/record-hand-act';
import { releaseNode } from './release-node';
import { RevocationReasonInvalid } from './revoke-errors';
import { formatRevocation, revokeNode } from './revoke-node';
import { seatsLeftLines } from './seats-left-lines';

/** The arguments of `node.release`. */
export const NodeReleaseArgs = z.strictObject({ node: NodeName, force: z.boolean().optional() });

/** The arguments of `node.revoke`: the node, and why (the operator's words) and the condition it answers, when given. */
export const NodeRevokeArgs = z.strictObject({ node: NodeName, why: z.string().optional(), condition: z.string().optional() });

/**
 * The verbs `node.release` (`mesh-control node release NAME`: retire a node gracefully) and
 * `node.revoke` (`mesh-control node revoke NAME`: cut a gone node off at once).
 */
export const releasePart: ControllerPart = {
  name: 'release',
  start: async (_ctx, verbs) => {
    verbs.register('node.release', NodeReleaseArgs, async (ctx, args) => {
      const outcome = await releaseNode(ctx, args.node, { force: args.force === true });
      const text = outcome.released
        ? `node ${outcome.node} released: it held no identity, so there was nothing to send it`
        : `node ${outcome.node}: final declaration sent (generation ${outcome.generation}); it is released once it reports having removed what it owns (see mesh-control nodes)`;
      return { result: outcome, text: [text, ...seatsLeftLines(outcome.seats_left_without_holder)].join('\n') };
    });
    verbs.register('node.revoke', NodeRevokeArgs, async (ctx, args) => {
      const why = args.why === undefined ? null : args.why.trim();
      if (why !== null && (why === '' || why.length > 500 || /[\r\n]/.test(why))) throw new RevocationReasonInvalid(args.why ?? '');
      const reason = checkHandAct('node revoke', { why: args.why, condition: args.condition }, false);
      const outcome = await revokeNode(ctx, args.node, why);
      const unkept = await keepHandAct(ctx, { verb: 'node.revoke', subject: args.node, ...reason });
      return { result: outcome, text: unkept === null ? formatRevocation(outcome) : `${formatRevocation(outcome)}\n${unkept}` };
    });
    return { stop: async () => undefined };
  },
};
