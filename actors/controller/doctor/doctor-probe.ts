import type { ProbeVerdict } from '../../../schema/doctor';

/** What a probe that could look found: a pass, a warning or a failure, said for a person. */
export interface ProbeFinding {
  verdict: Exclude<ProbeVerdict, 'cannot-run'>;
  detail: string;
  /** The next step; required unless it passed. */
  next?: string;
}

/**
 * One doctor probe: looks at one thing and says what it found. It throws when it cannot look
 * (what it needs does not answer), and is given a signal that aborts when its bound is spent;
 * the runner turns either into `cannot-run`, never a pass.
 */
export interface DoctorProbe {
  /** Short and stable: the key in the report and in status (`store`, `lease`). */
  name: string;
  /** The next step when the probe cannot run (what it needs is not answering). */
  whenCannotRun: string;
  run(signal: AbortSignal): Promise<ProbeFinding>;
}

/** A pass, saying what was seen. */
export function passed(detail: string): ProbeFinding {
  return { verdict: 'pass', detail };
}

/** A failure, saying what is wrong and what to do. */
export function failed(detail: string, next: string): ProbeFinding {
  return { verdict: 'fail', detail, next };
}

/** A probe cannot look: thrown by a probe whose means are missing, said as its `cannot-run` detail. */
export class ProbeCannotRun extends Error {
  override readonly name = 'ProbeCannotRun';
}
