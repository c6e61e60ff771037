import { OperatorError } from '../../shared/operator-error';

/** The store holds a declaration or an identity without what it needs beside it (the pinned keys). */
export class StoreInconsistent extends OperatorError {}
