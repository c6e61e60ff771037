/**
 * One heartbeat load in a process of its own: node scripts/run-ts.cjs
 * bench/fleet/heartbeat-worker.ts NODES DURATION_MS INTERVAL_MS SAMPLE_EVERY_MS. Progress goes
 * to standard error; the measurement is the last line of standard output, one JSON object
 * (HeartbeatMeasurement).
 */
import { ready } from '../../actors/shared/crypto';
import { measureHeartbeats } from './heartbeat-load';

async function main(): Promise<void> {
  const [nodes, durationMs, intervalMs, sampleEveryMs] = process.argv.slice(2).map(Number);
  if (![nodes, durationMs, intervalMs, sampleEveryMs].every((value) => Number.isInteger(value) && (value as number) > 0)) {
    throw new Error(`usage: heartbeat-worker.ts NODES DURATION_MS INTERVAL_MS SAMPLE_EVERY_MS (whole numbers above 0), got ${process.argv.slice(2).join(' ')}`);
  }
  await ready();
  const measurement = await measureHeartbeats({
    nodes: nodes as number,
    durationMs: durationMs as number,
    intervalMs: intervalMs as number,
    sampleEveryMs: sampleEveryMs as number,
    say: (line) => process.stderr.write(`${line}\n`),
  });
  // Written to the end before the process exits: a pipe takes a long line in pieces, and
  // process.exit does not wait for them.
  await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(measurement)}\n`, () => resolve()));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
