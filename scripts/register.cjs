'use strict';
// Lets a checkout run its TypeScript sources directly (bin/*, scripts/*): each .ts file is
// compiled to CommonJS by swc when first required. The shipped host is a bundle (npm run
// build:host) and never loads this file.
const fs = require('node:fs');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const options = {
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, { ...options, filename });
  module._compile(code, filename);
};
