import { OperatorError } from '../../shared/operator-error';

/** This host cannot be a mesh's first node (an episodic host), or its bundle says so. */
export class FirstNodeRefused extends OperatorError {}

/** The bundle file could not be read, or is not a foundation bundle. */
export class FoundationBundleUnreadable extends OperatorError {}

/** `--bundle` on a machine that is a node already: a foundation is raised on a hosted machine only. */
export class FoundationOnEnrolledNode extends OperatorError {}
