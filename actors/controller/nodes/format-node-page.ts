import { formatNodeList } from './format-node-list';
import type { NodePage } from './list-node-page';
import type { NodePageArgs } from './node-page-args';

/**
 * One page of `nodes.list` for a terminal (absences said relative to `now`): the table, then, when more nodes follow, the command
 * that shows the next page (with the same `--limit`, if one was asked for).
 */
export function formatNodePage(page: NodePage, args: NodePageArgs, now: Date): string {
  if (page.nodes.length === 0 && args.after !== undefined) return `no nodes follow "${args.after}" (nodes are listed by name)`;
  const table = formatNodeList(page.nodes, now);
  if (page.next_after === null) return table;
  const limit = args.limit === undefined ? '' : ` --limit ${args.limit}`;
  return `${table}\nmore nodes follow: mesh-control nodes --after ${page.next_after}${limit}`;
}
