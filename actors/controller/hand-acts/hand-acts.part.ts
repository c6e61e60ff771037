import * as z from 'zod';
import type { ControllerPart } from '../serve/controller-parts';
import { checkHandAct, HandActArgs } from './hand-act-args';
import { countHandActs, listHandActs, repeatedCauses } from './hand-acts.repo';
import { formatHandAct, formatHandActs, type HandActsListing } from './format-hand-acts';
import { parseSince } from './parse-since';
import { HAND_ACTS_KEPT_MS, recordHandAct } from './record-hand-act';

/** The arguments of `hand-act.record`: why (required) and the condition it answers. */
export const HandActRecordArgs = z.strictObject(HandActArgs);

/** The arguments of `hand-acts`: the window (`30d` unless given) and how many to list (50). */
export const HandActsArgs = z.strictObject({
  since: z.string().optional(),
  limit: z.int().min(1, { error: 'must be at least 1' }).max(1000, { error: 'must be at most 1000' }).optional(),
});

/** The window `hand-acts` reads unless told. */
export const HAND_ACTS_DEFAULT_SINCE = '30d';

/**
 * The hand-act log's verbs: `hand-act.record` (something done by hand outside the mesh's verbs,
 * kept with why) and `hand-acts` (the window's acts and the causes that came back). The other
 * hand acts (push, plans close and retry, node revoke) record themselves through recordHandAct.
 */
export const handActsPart: ControllerPart = {
  name: 'hand-acts',
  start: async (_ctx, verbs) => {
    verbs.register('hand-act.record', HandActRecordArgs, async (ctx, args) => {
      const reason = checkHandAct('hand-act record', args, { example: '--why "restarted the broker by hand after the disk filled"' });
      const act = await recordHandAct(ctx, { verb: 'hand-act.record', subject: null, ...reason });
      return { result: act, text: `recorded: ${formatHandAct(act)}` };
    });
    verbs.register(
      'hand-acts',
      HandActsArgs,
      async (ctx, args) => {
        const sinceMs = parseSince(args.since ?? HAND_ACTS_DEFAULT_SINCE, HAND_ACTS_KEPT_MS, '365d');
        const since = new Date(ctx.now().getTime() - sinceMs);
        const [acts, total, repeated] = await Promise.all([listHandActs(ctx.store, since, args.limit ?? 50), countHandActs(ctx.store, since), repeatedCauses(ctx.store, since)]);
        const listing: HandActsListing = { since: since.toISOString(), acts, total, repeated };
        return { result: listing, text: formatHandActs(listing) };
      },
      { query: true },
    );
    return { stop: async () => undefined };
  },
};
