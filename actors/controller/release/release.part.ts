import * as z from 'zod';
import { NodeName } from '../../../schema/primitives';
import type { ControllerPart } from '../serve/controller-parts';
import { releaseNode } from './release-node';

/** The arguments of `node.release`. */
export const NodeReleaseArgs = z.strictObject({ node: NodeName });

/** The verb `node.release` (`mesh-control node release NAME`): retire a node gracefully. */
export const releasePart: ControllerPart = {
  name: 'release',
  start: async (_ctx, verbs) => {
    verbs.register('node.release', NodeReleaseArgs, async (ctx, args) => {
      const outcome = await releaseNode(ctx, args.node);
      const text = outcome.released
        ? `node ${outcome.node} released: it held no identity, so there was nothing to send it`
        : `node ${outcome.node}: final declaration sent (generation ${outcome.generation}); it is released once it reports having removed what it owns (see mesh-control nodes)`;
      return { result: outcome, text };
    });
    return { stop: async () => undefined };
  },
};
