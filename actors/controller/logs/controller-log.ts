import { LOG_FORMATS, LOG_LEVELS, type ControllerLog, type LogFields, type LogFormat, type LogLevel } from './log-fields';
import { LogFormatUnknown, LogLevelUnknown } from './log-errors';

/** Options of {@link controllerLog}. */
export interface ControllerLogOptions {
  format?: LogFormat;
  /** Lines below this level are dropped (info unless given). */
  level?: LogLevel;
  /** Where lines go: standard error unless given (tests pass a collector). */
  write?: (text: string) => void;
}

/** The names pino writes itself on every JSON line. */
const RESERVED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name']);

/** `--log-level`'s value as a level, or LogLevelUnknown quoting it. */
export function parseLogLevel(value: string): LogLevel {
  const level = LOG_LEVELS.find((known) => known === value.trim().toLowerCase());
  if (level === undefined) throw new LogLevelUnknown(value);
  return level;
}

/** `--log-format`'s value as a format, or LogFormatUnknown quoting it. */
export function parseLogFormat(value: string): LogFormat {
  const format = LOG_FORMATS.find((known) => known === value.trim().toLowerCase());
  if (format === undefined) throw new LogFormatUnknown(value);
  return format;
}

/**
 * The serving controller's log. `human` keeps the lines a person and a journal have always read
 * (the UTC time, then the sentence; warnings and errors say so first); `json` writes one object
 * per line through pino, with `level` as a word, `time` in ISO 8601, `msg` the same sentence,
 * and the line's fields beside them, for a log shipper. Both write synchronously, so the last
 * lines before an exit are not lost.
 */
export function controllerLog(options: ControllerLogOptions = {}): ControllerLog {
  const threshold = LOG_LEVELS.indexOf(options.level ?? 'info');
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  const wanted = (level: LogLevel): boolean => LOG_LEVELS.indexOf(level) >= threshold;
  if (options.format === 'json') {
    // Loaded here, not with the file: every mesh-control verb loads this file, few log JSON.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pino = require('pino') as typeof import('pino');
    const logger = pino(
      {
        name: 'mesh-control',
        level: options.level ?? 'info',
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      options.write === undefined ? pino.destination({ dest: 2, sync: true }) : { write },
    );
    return (line: string, fields?: LogFields): void => {
      const { level = 'info', ...rest } = fields ?? {};
      if (!wanted(level)) return;
      // pino writes a field named like its own a second time, and readers disagree on which wins.
      const own = Object.fromEntries(Object.entries(rest).map(([key, value]) => [RESERVED.has(key) ? `field_${key}` : key, value]));
      logger[level](own, line);
    };
  }
  return (line: string, fields?: LogFields): void => {
    const level = fields?.level ?? 'info';
    if (!wanted(level)) return;
    write(`${new Date().toISOString()} ${level === 'warn' || level === 'error' ? `${level}: ` : ''}${line}\n`);
  };
}
