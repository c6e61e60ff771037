/**
 * The in-host passes of the host benchmark in a process of their own, under the V8 flags of a
 * `nox-mesh-host run` process (actors/host/run/run-process-flags.ts), so they measure the code
 * as the running host runs it: node scripts/run-ts.cjs bench/host/in-host-worker.ts ROOT NOOPS.
 * The measurement is the last line of standard output, one JSON object (InHostPasses).
 */
import { setRunProcessFlags } from '../../actors/host/run/run-process-flags';

setRunProcessFlags();

// Required after the flags are set, as main.ts does for `run`: the host's code is loaded under them.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runMeasurementWorker } = require('../fleet/run-measurement-worker') as typeof import('../fleet/run-measurement-worker');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { inHostPasses } = require('./in-host-passes') as typeof import('./in-host-passes');

runMeasurementWorker(async () => {
  const [root, noops] = process.argv.slice(2);
  if (root === undefined || !/^\d+$/.test(noops ?? '')) throw new Error('usage: in-host-worker.ts ROOT NOOPS');
  return inHostPasses(root, Number(noops));
});
