import { OperatorError } from '../../shared/operator-error';
import { LOG_FORMATS, LOG_LEVELS } from './log-fields';

/** `--log-level` names no level the controller logs at. */
export class LogLevelUnknown extends OperatorError {
  constructor(value: string) {
    super('--log-level is not a level the controller knows', { value, next: `give one of ${LOG_LEVELS.join(', ')} (info unless given)` });
  }
}

/** `--log-format` names no format the controller writes. */
export class LogFormatUnknown extends OperatorError {
  constructor(value: string) {
    super('--log-format is not a format the controller writes', { value, next: `give one of ${LOG_FORMATS.join(', ')} (human unless given: one line of text per event; json: one JSON object per line)` });
  }
}
