import { declarationsPart } from '../declarations/declarations.part';
import { enrolmentPart } from '../enrolment/enrolment.part';
import { nodesPart } from '../nodes/nodes.part';
import { releasePart } from '../release/release.part';
import { reportsPart } from '../reports/reports.part';
import { tokensPart } from '../tokens/tokens.part';
import type { ControllerPart } from './controller-parts';

/**
 * The parts `mesh-control serve` starts, in order (stopped in reverse). Each part adds its own
 * entry here: one import and one line.
 */
export const CONTROLLER_PARTS: readonly ControllerPart[] = [
  tokensPart,
  nodesPart,
  // Reports are taken before enrolments are answered: a node's first report follows its enrolment closely.
  reportsPart,
  declarationsPart,
  releasePart,
  enrolmentPart,
];
