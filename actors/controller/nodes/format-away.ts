import type { NodeListing } from './list-nodes';
import { formatSpan } from './format-span';

/**
 * A node's absence said as a fact, relative to `now`: `4 days, since 2026-11-29T09:12:00.000Z`
 * while it is disconnected, `back 2 min ago after 3 h` once it came back, `-` when it has never
 * been away. Never a judgement: being away is a state, not a problem.
 */
export function formatAway(node: Pick<NodeListing, 'lifecycle_state' | 'disconnected_since' | 'last_away'>, now: Date): string {
  if (node.lifecycle_state === 'disconnected') {
    return node.disconnected_since === null ? 'never heard from' : `${formatSpan(now.getTime() - Date.parse(node.disconnected_since))}, since ${node.disconnected_since}`;
  }
  if (node.last_away === null) return '-';
  return `back ${formatSpan(now.getTime() - Date.parse(node.last_away.back_at))} ago after ${formatSpan(node.last_away.seconds * 1000)}`;
}
