import type { ControllerPart } from '../serve/controller-parts';
import { formatNodePage } from './format-node-page';
import { listNodePage } from './list-node-page';
import { NodePageArgs } from './node-page-args';

/**
 * The verb `nodes.list` (`mesh-control nodes`): the nodes by name, each with its state, address,
 * version and last contact, a page at a time (NodePageArgs), since the whole of a large fleet
 * does not fit in one message on the broker. Answers a NodePage.
 */
export const nodesPart: ControllerPart = {
  name: 'nodes',
  start: async (_ctx, verbs) => {
    verbs.register('nodes.list', NodePageArgs, async (ctx, args) => {
      const page = await listNodePage(ctx.store, ctx.now(), args);
      return { result: page, text: formatNodePage(page, args) };
    });
    return { stop: async () => undefined };
  },
};
