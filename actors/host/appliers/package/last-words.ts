import type { RunResult } from '../../../shared/process/command-runner';

// Package managers print pages of progress before the line that matters; a report has room
// for one line. The first line marked as an error is what a person would read first.
const ERROR_LINE = /^(?:E:|error:|ERROR:|dpkg: error|fatal:)/i;

/**
 * What a package manager said that matters, in one line: from its first error line on (the
 * lines after it are often the detail: apk's "name (no such package)"), or when it marked no
 * error, its last lines; at most `lines` of them, joined with " / ". Also covers a program
 * that could not start or ran out of time, so every failure has words.
 */
export function lastWords(result: RunResult, lines = 4): string {
  const program = result.argv[0] ?? 'the command';
  if (result.spawnError !== undefined) return `could not start ${program}: ${result.spawnError}`;
  if (result.timedOut) return `${program} was still running after ${Math.round(result.durationMs / 1000)} s and was stopped`;
  const stderr = linesOf(result.stderr);
  const stdout = linesOf(result.stdout);
  for (const stream of [stderr, stdout]) {
    const firstError = stream.findIndex((line) => ERROR_LINE.test(line));
    if (firstError >= 0) return stream.slice(firstError, firstError + lines).join(' / ');
  }
  const chosen = (stderr.length > 0 ? stderr : stdout).slice(-lines);
  if (chosen.length > 0) return chosen.join(' / ');
  return result.code === null ? `${program} was ended by ${result.signal}` : `${program} exited ${result.code} without a word`;
}

function linesOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
