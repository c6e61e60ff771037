import { ready } from '../../actors/shared/crypto';

/**
 * Runs one measurement as the whole of a worker process, the way the bench runner reads it
 * back: libsodium is made ready, progress lines go to standard error, and the measurement is
 * the last line of standard output, one JSON object; then the process exits 0. Anything thrown
 * (a usage error included) goes to standard error with its stack, and the process exits 1.
 */
export function runMeasurementWorker(measure: (say: (line: string) => void) => Promise<unknown>): void {
  const main = async (): Promise<void> => {
    await ready();
    const measurement = await measure((line) => process.stderr.write(`${line}\n`));
    // Written to the end before the process exits: a pipe takes a long line in pieces, and
    // process.exit does not wait for them.
    await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(measurement)}\n`, () => resolve()));
  };
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
