#!/usr/bin/env node
'use strict';
// Runs a TypeScript file from the checkout: node scripts/run-ts.cjs FILE.ts [args...]
require('./register.cjs');
const path = require('node:path');
const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node scripts/run-ts.cjs FILE.ts [args...]\n');
  process.exit(2);
}
process.argv.splice(1, 1);
require(path.resolve(file));
