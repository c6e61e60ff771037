import { registerModuleVerbs } from '../modules/module-verbs';
import type { ControllerPart } from '../serve/controller-parts';
import { PlanBook, type PlanBookOptions } from './plan-book';
import { registerPlanVerbs } from './plan-verbs';

/**
 * Modules and plans in the serving controller: the verbs `module.add`, `assign`, `unassign`,
 * `push`, `plans.list`, `plans.show`, `plans.close` and `plans.retry`, and the plan book, which
 * takes up every open plan at start — so a controller taking over the lease, or started again,
 * carries them on — and works them until the part stops.
 */
export function plansPart(options: PlanBookOptions = {}): ControllerPart {
  return {
    name: 'plans',
    start: async (ctx, verbs) => {
      const book = new PlanBook(ctx, options);
      registerModuleVerbs(verbs, book);
      registerPlanVerbs(verbs, book);
      await book.start();
      return { stop: () => book.stop() };
    },
  };
}
