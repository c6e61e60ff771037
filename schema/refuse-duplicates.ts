import type * as z from 'zod';

/**
 * A superRefine body for lists whose items must be unique by some key: each repeat is an issue
 * on the repeating item, naming the key and where it first appeared. Lists keyed this way are
 * read as maps by the host and the controller, and a silent last-one-wins would hide a mistake.
 */
export function refuseDuplicates<T>(
  what: string,
  keyOf: (item: T) => string,
  field?: string,
): (items: readonly T[], ctx: z.core.$RefinementCtx<T[]>) => void {
  return (items, ctx) => {
    const firstAt = new Map<string, number>();
    items.forEach((item, index) => {
      const key = keyOf(item);
      const first = firstAt.get(key);
      if (first === undefined) {
        firstAt.set(key, index);
        return;
      }
      ctx.addIssue({
        code: 'custom',
        path: field === undefined ? [index] : [index, field],
        message: `duplicate ${what} ${JSON.stringify(key)}: already at [${first}]`,
        input: item,
      });
    });
  };
}
