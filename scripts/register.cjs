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

// Why Node's Module._extensions and not a loader: Node 20, the floor (package.json engines), has
// no public hook for require(). module.register() reaches only import, and module.registerHooks,
// which covers require() too, comes with Node 22.15. The maintained CommonJS loaders (pirates,
// under @babel/register and @swc/register; @swc-node/register; tsx) set this same hook, so one
// of them would add a dependency to do what these lines do. With a floor of Node 22.15 this
// becomes module.registerHooks({ load }).
Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, { ...options, filename });
  module._compile(code, filename);
};
