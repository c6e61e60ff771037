#!/usr/bin/env node
'use strict';
// Prints the plain `N passed, N failed` line from jest's --json results. A suite that failed to
// run at all (a syntax error, a crash in setup) counts as one failure, so it cannot vanish.
const fs = require('node:fs');
const file = process.argv[2] || '.test-results/jest.json';
let results;
try {
  results = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (error) {
  console.log(`jest wrote no results to ${file}: ${error.message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const suitesThatDidNotRun = results.testResults.filter((s) => s.status === 'failed' && s.assertionResults.length === 0).length;
const passed = results.numPassedTests;
const failed = results.numFailedTests + suitesThatDidNotRun;
const skipped = results.numPendingTests + results.numTodoTests;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
