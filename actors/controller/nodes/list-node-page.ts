import type { HostKind } from '../../../schema/resource';
import type { OverlaySettings } from '../declarations/overlay-endpoint';
import type { Sql } from '../store/sql-store';
import { listNodeRecords, type NodeListing } from './list-nodes';
import { NODE_PAGE_DEFAULT, type NodePageArgs } from './node-page-args';

/** The answer of `nodes.list`: one page of nodes by name, and where the next page begins. */
export interface NodePage {
  nodes: NodeListing[];
  /**
   * The name to pass as `after` for the next page (the last name of this one), or null when
   * this page is the last. A node added or released while a caller pages through appears or not
   * depending on its name; every node present throughout appears exactly once.
   */
  next_after: string | null;
}

/**
 * The page of `nodes.list` that `args` asks for; one row more than the page is read to know
 * whether another follows. Silence is judged against `periods` (production's unless given).
 */
export async function listNodePage(sql: Sql, now: Date, args: NodePageArgs, periods?: Readonly<Record<HostKind, number>>, overlay?: OverlaySettings): Promise<NodePage> {
  const limit = args.limit ?? NODE_PAGE_DEFAULT;
  const rows = await listNodeRecords(sql, now, { ...(args.after === undefined ? {} : { after: args.after }), limit: limit + 1 }, periods, overlay);
  const nodes = rows.slice(0, limit);
  return { nodes, next_after: rows.length > limit ? (nodes.at(-1)?.name ?? null) : null };
}
