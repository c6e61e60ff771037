import { limitText, type EscalationReport } from '../../../machines/supervisor.machine';
import { OperatorError } from '../operator-error';

/**
 * The root supervisor gave up: one of its children failed more often than its limits allow, so
 * every child was stopped and the process exits non-zero for the init system to start it again.
 * The value quoted is the child's last error (for a nested supervisor, the chain down to the
 * child that kept failing).
 */
export class SupervisorEscalated extends OperatorError {
  /** The root supervisor's name. */
  readonly supervisor: string;
  /** What the child's slot reported when it gave up. */
  readonly report: EscalationReport;

  constructor(supervisor: string, report: EscalationReport) {
    super(
      `supervisor ${JSON.stringify(supervisor)} gave up on child ${JSON.stringify(report.child)} after ${limitText(report)}; last error`,
      {
        value: report.error,
        next: `fix what makes ${JSON.stringify(report.child)} fail (its last error is quoted above); the service manager starts the process again`,
      },
    );
    this.supervisor = supervisor;
    this.report = report;
  }
}
