/**
 * One heartbeat load in a process of its own: node scripts/run-ts.cjs
 * bench/fleet/heartbeat-worker.ts NODES DURATION_MS INTERVAL_MS SAMPLE_EVERY_MS. Progress goes
 * to standard error; the measurement is the last line of standard output, one JSON object
 * (HeartbeatMeasurement).
 */
import { measureHeartbeats } from './heartbeat-load';
import { runMeasurementWorker } from './run-measurement-worker';
import { wholeNumbersAboveZero } from './whole-numbers-above-zero';

runMeasurementWorker((say) => {
  const [nodes, durationMs, intervalMs, sampleEveryMs] = wholeNumbersAboveZero(
    process.argv.slice(2),
    4,
    'heartbeat-worker.ts NODES DURATION_MS INTERVAL_MS SAMPLE_EVERY_MS',
  );
  return measureHeartbeats({ nodes, durationMs, intervalMs, sampleEveryMs, say });
});
