// `mesh-control serve` with modules and plans, as its own process, for tests that kill it:
//
//   node scripts/run-ts.cjs actors/controller/plans/testing/serve-with-plans.ts DIR [OPTIONS_JSON]
//
// OPTIONS_JSON: {"first_report_wait_ms": N, "check_every_ms": N, "lease_bucket": "…",
// "lease": {ttlMs, renewEveryMs, marginMs, renewRetryMs, contendEveryMs}}. Logs to standard
// error as serve does; SIGTERM or SIGINT stops it cleanly (exit 0), an ending of its own exits 1.
import { serveController } from '../../serve/serve-controller';
import { waitForStopSignal } from '../../serve/wait-for-stop-signal';
import { partsWithPlans } from './parts-with-plans';
import type { LauncherOptions } from './rollout-mesh';

async function main(): Promise<void> {
  const [dir, json] = process.argv.slice(2);
  if (dir === undefined) throw new Error('usage: serve-with-plans.ts DIR [OPTIONS_JSON]');
  const options = JSON.parse(json ?? '{}') as LauncherOptions;
  const stopping = new AbortController();
  const stopSignal = waitForStopSignal(stopping.signal);
  const serving = await serveController(dir, {
    parts: partsWithPlans({
      ...(options.first_report_wait_ms === undefined ? {} : { firstReportWaitMs: options.first_report_wait_ms }),
      ...(options.check_every_ms === undefined ? {} : { checkEveryMs: options.check_every_ms }),
    }),
    ...(options.lease === undefined && options.lease_bucket === undefined ? {} : { lease: { ...(options.lease === undefined ? {} : { timings: options.lease }), ...(options.lease_bucket === undefined ? {} : { bucket: options.lease_bucket }) } }),
  });
  const outcome = await Promise.race([stopSignal.then((signal) => ({ signal })), serving.ended.then((error) => ({ error }))]);
  stopping.abort();
  if ('error' in outcome) {
    process.stderr.write(`${outcome.error.message}\n`);
    process.exit(1);
  }
  await serving.stop();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
