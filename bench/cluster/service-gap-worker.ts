/**
 * The cluster's service gap in a process of its own (bench/cluster/service-gap.ts):
 * node scripts/run-ts.cjs bench/cluster/service-gap-worker.ts HOSTS SERVER_KILLS CONTROLLER_KILLS.
 * Progress on standard error; the measurement (ServiceGap) is the last line of standard output.
 */
import { runMeasurementWorker } from '../fleet/run-measurement-worker';
import { wholeNumbersAboveZero } from '../fleet/whole-numbers-above-zero';
import { measureServiceGap } from './service-gap';

runMeasurementWorker((say) => {
  const [hosts, serverKills, controllerKills] = wholeNumbersAboveZero(process.argv.slice(2), 3, 'service-gap-worker.ts HOSTS SERVER_KILLS CONTROLLER_KILLS');
  return measureServiceGap({ hosts, serverKills, controllerKills, say });
});
