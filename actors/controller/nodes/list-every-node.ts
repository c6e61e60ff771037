import { ControlReplyMalformed } from '../control/control-errors';
import type { VerbAnswer } from '../control/verb-registry';
import type { NodeListing } from './list-nodes';
import type { NodePage } from './list-node-page';
import { NODE_PAGE_MAX } from './node-page-args';

/** Asks `nodes.list` for one page: `callController(dir, 'nodes.list', args)`, or the registry in a test. */
export type AskNodePage = (args: { after?: string; limit: number }) => Promise<VerbAnswer>;

/**
 * Every node, by name, read page after page of `nodes.list` until a page says none follow. Pages
 * of the largest size by default, so a fleet of 10,000 nodes is seventeen calls.
 *
 * A page that is not a NodePage, or whose `next_after` does not move past the one before, is
 * refused as ControlReplyMalformed rather than read on: a listing that never ends, or that
 * repeats nodes, would be worse than none.
 */
export async function listEveryNode(ask: AskNodePage, limit = NODE_PAGE_MAX): Promise<NodeListing[]> {
  const nodes: NodeListing[] = [];
  let after: string | undefined;
  for (;;) {
    const page = readNodePage((await ask(after === undefined ? { limit } : { after, limit })).result);
    nodes.push(...page.nodes);
    if (page.next_after === null) return nodes;
    if (after !== undefined && !(page.next_after > after)) {
      throw new ControlReplyMalformed('nodes.list', `the page after "${after}" says the next begins after "${page.next_after}", which is not further on`);
    }
    after = page.next_after;
  }
}

function readNodePage(result: unknown): NodePage {
  const page = result as Partial<NodePage> | null;
  const nextAfter = page?.next_after;
  if (typeof page !== 'object' || page === null || !Array.isArray(page.nodes) || !(nextAfter === null || typeof nextAfter === 'string')) {
    throw new ControlReplyMalformed('nodes.list', 'its result is not a page of nodes with next_after');
  }
  return { nodes: page.nodes, next_after: nextAfter };
}
