/**
 * One fleet size of the push-to-applied measurement in a process of its own (the runner gives
 * it a large heap): node scripts/run-ts.cjs bench/fleet/push-worker.ts NODES ROUNDS FLOOR_ROUNDS
 * ROUND_TIMEOUT_MS [--no-warm-up] [--shards=N]. Progress goes to standard error; the measurement is the last line of
 * standard output, one JSON object (PushMeasurement).
 */
import { measurePush } from './push-fleet';
import { runMeasurementWorker } from './run-measurement-worker';
import { wholeNumbersAboveZero } from './whole-numbers-above-zero';

runMeasurementWorker((say) => {
  const args = process.argv.slice(2);
  const warmUp = !args.includes('--no-warm-up');
  const shardsFlag = args.find((arg) => arg.startsWith('--shards='));
  const usage = 'push-worker.ts NODES ROUNDS FLOOR_ROUNDS ROUND_TIMEOUT_MS [--no-warm-up] [--shards=N]';
  const [nodes, rounds, floorRounds, roundTimeoutMs] = wholeNumbersAboveZero(
    args.filter((arg) => arg !== '--no-warm-up' && arg !== shardsFlag),
    4,
    usage,
  );
  const [shards] = shardsFlag === undefined ? [1] : wholeNumbersAboveZero([shardsFlag.slice('--shards='.length)], 1, usage);
  return measurePush({ nodes, rounds, warmUp, floorRounds, roundTimeoutMs, shards, say });
});
