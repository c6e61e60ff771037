import type { KV } from '@nats-io/kv';
import { ConditionEvent } from '../../../schema/condition';

/**
 * The newest `limit` transitions kept in the history bucket, newest first; only those of the
 * condition `id` when given. A value that is not a transition (written by hand) is skipped.
 */
export async function readConditionHistory(history: KV, options: { id?: string; limit: number }): Promise<ConditionEvent[]> {
  const keys: string[] = [];
  for await (const key of await history.keys(options.id === undefined ? '>' : `${options.id}.*`)) keys.push(key);
  // The last token of a key is when (base-36 milliseconds, padded): it sorts by time across conditions.
  const stamp = (key: string): string => key.slice(key.lastIndexOf('.') + 1);
  keys.sort((a, b) => stamp(b).localeCompare(stamp(a)));
  const events = await Promise.all(
    keys.slice(0, options.limit).map(async (key) => {
      const entry = await history.get(key);
      if (entry === null || entry.operation !== 'PUT') return null;
      try {
        const parsed = ConditionEvent.safeParse(entry.json());
        return parsed.success ? parsed.data : null;
      } catch {
        return null;
      }
    }),
  );
  return events.filter((event): event is ConditionEvent => event !== null);
}
