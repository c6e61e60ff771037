import * as z from 'zod';
import type { VerbRegistry } from '../control/verb-registry';
import type { PlanBook } from './plan-book';
import { PlanNotFound } from './plan-errors';
import { formatPlan, formatPlanList, planView } from './plan-view';
import { getPlan, listPlans } from './plans.repo';
import { checkHandAct, HandActArgs } from '../hand-acts/hand-act-args';
import { keepHandAct } from '../hand-acts/record-hand-act';

/** The arguments of `plans.list`: the ended plans too, and how many at most. */
export const PlansListArgs = z.strictObject({ all: z.boolean().optional(), limit: z.int().min(1).max(1000).optional() });
/** The arguments of `plans.show`, `plans.close` and `plans.retry`: the plan's id. */
export const PlanIdArgs = z.strictObject({ id: z.int({ error: 'expected a plan id, a whole number' }).min(1, { error: 'expected a plan id, a whole number' }) });
/** The arguments of `plans.close` and `plans.retry`, hand acts: the plan's id, why, and the condition it answers. */
export const PlanHandActArgs = PlanIdArgs.extend(HandActArgs);

/**
 * The plan verbs of the serving controller: `plans.list` and `plans.show` (which only read),
 * `plans.close` and `plans.retry` (which act, through `book`).
 */
export function registerPlanVerbs(verbs: VerbRegistry, book: PlanBook): void {
  verbs.register(
    'plans.list',
    PlansListArgs,
    async (ctx, args) => {
      const all = args.all === true;
      const views = (await listPlans(ctx.store, { all, limit: args.limit ?? 50 })).map(planView);
      return { result: { plans: views }, text: formatPlanList(views, all) };
    },
    { query: true },
  );
  verbs.register(
    'plans.show',
    PlanIdArgs,
    async (ctx, args) => {
      const row = await getPlan(ctx.store, args.id);
      if (row === undefined) throw new PlanNotFound(args.id);
      const view = planView(row);
      return { result: view, text: formatPlan(view) };
    },
    { query: true },
  );
  verbs.register('plans.close', PlanHandActArgs, async (ctx, args) => {
    const reason = checkHandAct('plans close', args, false);
    const view = planView(await book.close(args.id));
    const text = `plan ${view.id} closed; ${view.unsent.length === 0 ? 'it had sent every node' : `never sent: ${view.unsent.join(', ')} (mesh-control push NODE --why TEXT sends one)`}`;
    const unkept = await keepHandAct(ctx, { verb: 'plans.close', subject: `plan ${view.id}`, ...reason });
    return { result: view, text: unkept === null ? text : `${text}\n${unkept}` };
  });
  verbs.register('plans.retry', PlanHandActArgs, async (ctx, args) => {
    const reason = checkHandAct('plans retry', args, false);
    const view = planView(await book.retry(args.id));
    const unkept = await keepHandAct(ctx, { verb: 'plans.retry', subject: `plan ${view.id}`, ...reason });
    const text = view.state === 'sendingFirst' || view.state === 'awaitingFirst'
      ? `plan ${view.id} retried: the first machine, ${view.first ?? '(none)'}, is sent the revision again`
      : `plan ${view.id} retried: ${view.state === 'done' ? 'every node is sent' : `sending ${view.unsent.join(', ') || 'the rest'}`}`;
    return { result: view, text: unkept === null ? text : `${text}\n${unkept}` };
  });
}
