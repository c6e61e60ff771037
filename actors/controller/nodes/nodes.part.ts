import type { HostKind } from '../../../schema/resource';
import type { ControllerPart } from '../serve/controller-parts';
import { formatNodePage } from './format-node-page';
import { listNodePage } from './list-node-page';
import { NodePageArgs } from './node-page-args';

/**
 * The verb `nodes.list` (`mesh-control nodes`): the nodes by name, each with its state, kind,
 * address, version, last contact judged against its kind's heartbeat `periods` (production's
 * unless given) and its absence, a page at a time (NodePageArgs), since the whole of a large
 * fleet does not fit in one message on the broker. Answers a NodePage.
 */
export function nodesPartFor(periods?: Readonly<Record<HostKind, number>>): ControllerPart {
  return {
    name: 'nodes',
    start: async (_ctx, verbs) => {
      verbs.register('nodes.list', NodePageArgs, async (ctx, args) => {
        const now = ctx.now();
        const page = await listNodePage(ctx.store, now, args, periods, ctx.config.overlay);
        return { result: page, text: formatNodePage(page, args, now) };
      });
      return { stop: async () => undefined };
    },
  };
}

/** The verb `nodes.list` with production's heartbeat periods (nodesPartFor). */
export const nodesPart: ControllerPart = nodesPartFor();
