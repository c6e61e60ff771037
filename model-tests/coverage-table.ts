import type { CoverageRecord } from './harness/coverage-file';

/**
 * The coverage of every model as a table (states and transitions covered of total, paths run,
 * passed and failed), the notes under it (capped simple paths, what is missing), and whether
 * every model passed: fully covered, no failing path, every path run.
 */
export function coverageTable(records: readonly CoverageRecord[]): { text: string; ok: boolean } {
  const header = ['machine', 'states', 'transitions', 'paths', 'passed', 'failed', 'result'];
  const notes: string[] = [];
  let ok = true;
  const rows = records.map((record) => {
    const complete = record.problems.length === 0;
    const result = !complete || record.paths.failed > 0 ? 'FAIL' : record.paths.not_run > 0 ? 'INCOMPLETE' : 'pass';
    if (result !== 'pass') ok = false;
    if (record.paths.note) notes.push(`${record.machine}: ${record.paths.note}`);
    if (record.paths.not_run > 0) notes.push(`${record.machine}: ${record.paths.not_run} paths not run`);
    for (const problem of record.problems) notes.push(`${record.machine}: ${problem}`);
    return [
      record.machine,
      `${record.states.covered}/${record.states.total}`,
      `${record.transitions.covered}/${record.transitions.total}`,
      String(record.paths.total),
      String(record.paths.passed),
      String(record.paths.failed),
      result,
    ];
  });
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column].length)));
  const line = (row: string[]): string => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();
  const text = [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line), ...(notes.length ? ['', ...notes] : [])];
  return { text: `${text.join('\n')}\n`, ok };
}
