/**
 * Makes the host bundle's code cache (code-cache.ts) at build time: runs the bundle on the command
 * line given, compiled as the cached start compiles it, and when the process ends writes what V8
 * compiled by then, with its header, to the file named. Only scripts/build-host.ts runs it, with
 * the Node that built the bundle; the host itself never writes a cache.
 *
 * Usage: node train-code-cache.cjs BUNDLE OUT_FILE VERB [ARGS...]
 */
import fs from 'node:fs';
import path from 'node:path';
import { compileBundle, encodeCodeCache } from './code-cache';

const [bundleArgument, outArgument, ...hostArguments] = process.argv.slice(2);
if (bundleArgument === undefined || outArgument === undefined || hostArguments.length === 0) {
  process.stderr.write('usage: train-code-cache BUNDLE OUT_FILE VERB [ARGS...]\n');
  process.exit(2);
}
const bundle = path.resolve(bundleArgument);
const out = path.resolve(outArgument);
const bytes = fs.readFileSync(bundle);
// The host reads its verb from argv as it would under `node bundle VERB ...`.
process.argv = [process.argv[0] ?? process.execPath, bundle, ...hostArguments];
const compiled = compileBundle(bundle, bytes);
process.once('exit', () => {
  fs.writeFileSync(out, encodeCodeCache(bytes, compiled.script.createCachedData()), { mode: 0o644 });
});
compiled.run();
