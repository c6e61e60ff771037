import { formatSpan } from './format-span';

/**
 * When the mesh last heard from a node, said as a fact: `last seen 12 s ago`, `last seen 4
 * days ago`, `never seen`. Never a judgement ("offline", "stale", "lost"): a laptop shut for
 * three weeks is doing nothing wrong, and what counts as too long is for whoever is looking.
 * A time ahead of `now` (another machine's clock) reads as just now.
 */
export function formatLastSeen(lastSeen: Date | null, now: Date): string {
  if (lastSeen === null) return 'never seen';
  return `last seen ${formatSpan(now.getTime() - lastSeen.getTime())} ago`;
}
