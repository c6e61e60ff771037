import * as z from 'zod';
import { ConditionId } from '../../../schema/condition';
import type { KV } from '@nats-io/kv';
import type { ControllerPart } from '../serve/controller-parts';
import { ConditionNotFound, SilenceWhyMissing } from './condition-errors';
import type { ConditionStore } from './condition-store';
import { formatCondition, formatConditionHistory, formatConditionList } from './format-conditions';
import { parseSilenceFor } from './parse-silence-for';
import { readConditionHistory } from './read-condition-history';

/** The arguments of `conditions.silence`. */
export const SilenceArgs = z.strictObject({
  id: ConditionId,
  /** How long, as given (`2h`): parsed here so a refusal quotes it. */
  for: z.string(),
  why: z.string().max(500, { error: 'must be at most 500 characters' }),
  /** Who silences it: the login of the person at the CLI. */
  by: z.string().min(1).max(200),
});

/** The arguments of `conditions.history`. */
export const HistoryArgs = z.strictObject({
  id: ConditionId.optional(),
  limit: z.int().min(1, { error: 'must be at least 1' }).max(10_000, { error: 'must be at most 10000' }).optional(),
});

/**
 * The verbs over the condition store: `conditions` (the open ones, urgent first), `conditions.show`,
 * `conditions.history` (read only) and `conditions.silence` (a hand act, kept as a call).
 */
export function conditionsPart(store: ConditionStore, history: KV): ControllerPart {
  return {
    name: 'conditions',
    start: async (_ctx, verbs) => {
      verbs.register(
        'conditions',
        z.strictObject({}),
        async (callCtx) => {
          const now = callCtx.now();
          const open = await store.open(now);
          return { result: { conditions: open }, text: formatConditionList(open, now) };
        },
        { query: true },
      );
      verbs.register(
        'conditions.show',
        z.strictObject({ id: ConditionId }),
        async (callCtx, args) => {
          const condition = await store.get(args.id);
          if (condition === null) throw new ConditionNotFound(args.id);
          return { result: condition, text: formatCondition(condition, callCtx.now()) };
        },
        { query: true },
      );
      verbs.register(
        'conditions.history',
        HistoryArgs,
        async (_callCtx, args) => {
          const events = await readConditionHistory(history, { limit: args.limit ?? 50, ...(args.id === undefined ? {} : { id: args.id }) });
          return { result: { events }, text: formatConditionHistory(events) };
        },
        { query: true },
      );
      verbs.register('conditions.silence', SilenceArgs, async (callCtx, args) => {
        const forMs = parseSilenceFor(args.for);
        if (args.why.trim() === '') throw new SilenceWhyMissing();
        const now = callCtx.now();
        const condition = await store.silence(args.id, { by: args.by, why: args.why.trim(), until: new Date(now.getTime() + forMs) }, now);
        return { result: condition, text: formatCondition(condition, now) };
      });
      return { stop: () => Promise.resolve() };
    },
  };
}
