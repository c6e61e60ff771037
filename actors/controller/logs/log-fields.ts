/** The levels of the controller's log, least to most urgent. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** One level of the controller's log. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How the log is written: `human` (the time, then the sentence) or `json` (one object per line). */
export const LOG_FORMATS = ['human', 'json'] as const;

/** One format of the controller's log. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * What a log line may carry besides its sentence: its level (info unless given) and fields a
 * machine reading the JSON log filters on (`node`, `epoch`, `child`). The sentence already says
 * everything a person needs; the fields repeat it for `jq`, never add key material or secrets.
 */
export interface LogFields {
  level?: LogLevel;
  [field: string]: string | number | boolean | null | undefined;
}

/** The controller's log as its parts call it: `ctx.log(line)` or `ctx.log(line, { level: 'warn', node })`. */
export type ControllerLog = (line: string, fields?: LogFields) => void;
