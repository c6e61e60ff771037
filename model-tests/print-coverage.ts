/**
 * Prints the coverage table of every model from the files the model tests leave in
 * `.test-results/model-coverage/` (or the folder given as the first argument), and exits
 * non-zero when a model is not fully covered, had a failing path or was not run whole.
 *
 *   node scripts/run-ts.cjs model-tests/print-coverage.ts [DIR]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { coverageTable } from './coverage-table';
import { COVERAGE_DIR } from './harness/coverage-file';
import type { CoverageRecord } from './harness/coverage-file';

const dir = process.argv[2] ?? COVERAGE_DIR;
let files: string[];
try {
  files = readdirSync(dir).filter((file) => file.endsWith('.json')).sort();
} catch {
  files = [];
}
if (files.length === 0) {
  process.stderr.write(`no model coverage in ${dir}: the model tests did not run, or wrote nothing\n`);
  process.exit(1);
}
const records = files.map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as CoverageRecord);
const { text, ok } = coverageTable(records);
process.stdout.write(`\nmodel coverage\n\n${text}`);
process.exit(ok ? 0 : 1);
