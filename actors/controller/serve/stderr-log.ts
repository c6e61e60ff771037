import { controllerLog } from '../logs/controller-log';
import type { ControllerLog } from '../logs/log-fields';

/**
 * The serving controller's log: one line per event on standard error, each starting with the
 * time in UTC, so a supervisor's journal and a person at a terminal read the same thing.
 * `mesh-control serve --log-format json` writes the same lines as JSON objects instead.
 */
export const stderrLog: ControllerLog = controllerLog({ format: 'human' });
