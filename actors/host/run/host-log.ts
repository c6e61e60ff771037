import { utcTimestamp } from '../../shared/time/utc-timestamp';

/**
 * Where the running host says what it is doing: one line per event, for a person reading the
 * service's log. Never given key material, a token secret, or a declaration's contents.
 */
export interface HostLog {
  say(line: string): void;
}

/** A log writing plain lines, or JSON lines (`{"at": …, "message": …}`) for a program to read. */
export function streamLog(stream: { write(text: string): unknown }, json: boolean, now: () => Date = () => new Date()): HostLog {
  return {
    say: (line) => {
      stream.write(json ? `${JSON.stringify({ at: utcTimestamp(now()), message: line })}\n` : `${line}\n`);
    },
  };
}
