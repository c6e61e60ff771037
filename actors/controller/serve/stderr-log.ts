/**
 * The serving controller's log: one line per event on standard error, each starting with the
 * time in UTC, so a supervisor's journal and a person at a terminal read the same thing.
 */
export function stderrLog(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}
