#!/usr/bin/env node
'use strict';
// Prints the plain `N passed, N failed` line from jest's --json results, summed over every file
// given (default .test-results/jest.json). A suite that failed to run at all (a syntax error, a
// crash in setup) counts as one failure, and a results file that is missing or unreadable as
// another, so neither can vanish. Skipped tests are said on a line of their own before it.
const fs = require('node:fs');
const files = process.argv.length > 2 ? process.argv.slice(2) : ['.test-results/jest.json'];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of files) {
  let results;
  try {
    results = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    console.log(`jest wrote no results to ${file}: ${error.message}`);
    failed += 1;
    continue;
  }
  const suitesThatDidNotRun = results.testResults.filter((s) => s.status === 'failed' && s.assertionResults.length === 0).length;
  passed += results.numPassedTests;
  failed += results.numFailedTests + suitesThatDidNotRun;
  skipped += results.numPendingTests + results.numTodoTests;
}
if (skipped) console.log(`${skipped} skipped (each says why in its suite's output)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
