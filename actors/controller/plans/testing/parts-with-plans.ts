import { declarationsPart } from '../../declarations/declarations.part';
import { durationsPart } from '../../durations/durations.part';
import { enrolmentPart } from '../../enrolment/enrolment.part';
import { handActsPart } from '../../hand-acts/hand-acts.part';
import { nodesPart } from '../../nodes/nodes.part';
import { releasePart } from '../../release/release.part';
import type { ControllerPart } from '../../serve/controller-parts';
import { heartbeatTrackerPart, reportReceiverPart } from '../../serve/node-news.part';
import { tokensPart } from '../../tokens/tokens.part';
import type { PlanBookOptions } from '../plan-book';
import { plansPart } from '../plans.part';

/**
 * The parts `mesh-control serve` runs (controllerPartGroups), one per child, with the plans part
 * after them, for tests that serve a controller with modules and plans. `extra` parts (none
 * unless given) go last. Status is composed by serveController itself.
 */
export function partsWithPlans(options: PlanBookOptions | null, extra: readonly ControllerPart[] = []): ControllerPart[] {
  const news = (): void => undefined;
  return [
    reportReceiverPart(news),
    heartbeatTrackerPart(news),
    tokensPart,
    enrolmentPart,
    declarationsPart,
    releasePart,
    nodesPart,
    ...(options === null ? [] : [plansPart(options)]),
    handActsPart,
    durationsPart(),
    ...extra,
  ];
}
