import { z } from 'zod';
import type { ControllerPart } from '../serve/controller-parts';
import { formatNodeList } from './format-node-list';
import { listNodeRecords } from './list-nodes';

/** The verb `nodes.list` (`mesh-control nodes`): every node, its state, address, version and last contact. */
export const nodesPart: ControllerPart = {
  name: 'nodes',
  start: async (_ctx, verbs) => {
    verbs.register('nodes.list', z.strictObject({}), async (ctx) => {
      const nodes = await listNodeRecords(ctx.store, ctx.now());
      return { result: { nodes }, text: formatNodeList(nodes) };
    });
    return { stop: async () => undefined };
  },
};
