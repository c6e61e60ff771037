/**
 * One fleet size of the push-to-applied measurement in a process of its own (the runner gives
 * it a large heap): node scripts/run-ts.cjs bench/fleet/push-worker.ts NODES ROUNDS FLOOR_ROUNDS
 * ROUND_TIMEOUT_MS [--no-warm-up]. Progress goes to standard error; the measurement is the last line of
 * standard output, one JSON object (PushMeasurement).
 */
import { ready } from '../../actors/shared/crypto';
import { measurePush } from './push-fleet';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const warmUp = !args.includes('--no-warm-up');
  const [nodes, rounds, floorRounds, roundTimeoutMs] = args.filter((arg) => arg !== '--no-warm-up').map(Number);
  if (![nodes, rounds, floorRounds, roundTimeoutMs].every((value) => Number.isInteger(value) && (value as number) > 0)) {
    throw new Error(`usage: push-worker.ts NODES ROUNDS FLOOR_ROUNDS ROUND_TIMEOUT_MS [--no-warm-up] (whole numbers above 0), got ${process.argv.slice(2).join(' ')}`);
  }
  await ready();
  const measurement = await measurePush({
    nodes: nodes as number,
    rounds: rounds as number,
    warmUp,
    floorRounds: floorRounds as number,
    roundTimeoutMs: roundTimeoutMs as number,
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
