'use strict';
// Preloaded by a test into a host process it starts (`node -r THIS bin/nox-mesh-host …`): as the
// process exits, its last line on stderr lists every file it loaded, so the test can tell what a
// verb pulled in. Read it with loadedModules (loaded-modules.ts).
process.on('exit', () => {
  process.stderr.write(`\nloaded modules: ${JSON.stringify(Object.keys(require.cache))}\n`);
});
