import * as z from 'zod';
import { NodeName } from '../../../schema/primitives';

/** Nodes in a page of `nodes.list` when the caller does not say. */
export const NODE_PAGE_DEFAULT = 300;

/**
 * The most nodes one page of `nodes.list` may hold. A node's listing is at most about 800 bytes
 * (its JSON with a 63-character name and a 64-character version, its kind and absence, and its
 * line of the table), so a page this long stays under half the broker's 1 MB payload limit,
 * whatever the names (nodes.part.test.ts computes the worst case).
 */
export const NODE_PAGE_MAX = 600;

/**
 * The arguments of `nodes.list`: the page of at most `limit` nodes whose names come after
 * `after` in the listing's order (by name, byte by byte). With neither, the first page. A
 * caller reads the whole fleet by passing each page's `next_after` as the next `after`.
 */
export const NodePageArgs = z.strictObject({
  after: NodeName.optional(),
  limit: z
    .int({ error: 'must be a whole number of nodes' })
    .min(1, { error: 'must be at least 1' })
    .max(NODE_PAGE_MAX, { error: `must be at most ${NODE_PAGE_MAX}, so that a page fits in one message on the broker` })
    .optional(),
});
/** See {@link NodePageArgs}. */
export type NodePageArgs = z.infer<typeof NodePageArgs>;
