import { OperatorError } from '../../shared/operator-error';
import { EXIT } from '../../shared/cli/exit-status';

/**
 * The store is gone (state.json and its last-good copy both missing) but the state directory
 * shows the host was in use here (kept originals, a launch record): starting empty would take the
 * host's own files for the machine's. Every verb exits 4 ({@link EXIT}.storeDamaged) with it.
 * Thrown by the store when it finds that evidence; the command line needs nothing more.
 */
export class StoreEvidenceWithoutState extends OperatorError {
  constructor(what: string, details: { value?: string; next: string; cause?: unknown }) {
    super(what, { ...details, exitCode: EXIT.storeDamaged });
  }
}
