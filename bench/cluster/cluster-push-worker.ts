/**
 * Push-to-applied on a 3-server cluster in a process of its own (bench/cluster/cluster-push.ts):
 * node scripts/run-ts.cjs bench/cluster/cluster-push-worker.ts NODES ROUNDS ROUND_TIMEOUT_MS SHARDS.
 * Progress on standard error; the measurement is the last line of standard output.
 */
import { runMeasurementWorker } from '../fleet/run-measurement-worker';
import { wholeNumbersAboveZero } from '../fleet/whole-numbers-above-zero';
import { measureClusterPush } from './cluster-push';

runMeasurementWorker((say) => {
  const [nodes, rounds, roundTimeoutMs, shards] = wholeNumbersAboveZero(process.argv.slice(2), 4, 'cluster-push-worker.ts NODES ROUNDS ROUND_TIMEOUT_MS SHARDS');
  return measureClusterPush({ nodes, rounds, roundTimeoutMs, shards, say });
});
