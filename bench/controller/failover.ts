/**
 * Failover time of the controller's lease, measured on real processes: two `mesh-control serve`
 * on one mesh (a real nats-server, a real PostgreSQL store), the holder ended, and the time until
 * the standby says it serves. Ten runs after `kill -9` (nothing given back: the standby waits for
 * the key to expire, 15 s) and ten after a graceful stop (SIGTERM: the key is given back and the
 * standby hears it at once).
 *
 *   node scripts/run-ts.cjs bench/controller/failover.ts [RUNS]
 *
 * Each holder is ended at a random moment within the renewal period. Prints one line per run
 * and a summary table (min, median, max, in ms).
 */
import { LEASE_TIMINGS } from '../../machines/lease.machine';
import { startServeProcess, type ServeProcess } from '../../actors/controller/serve/testing/serve-process';
import { startTestMesh } from '../../actors/controller/serve/testing/test-mesh';
import { startTestPostgres } from '../../actors/shared/testing/test-postgres';

const SERVING = /serving: epoch (\d+)/;
const STANDING_BY = /lease: standing by: the lease is held by/;

type Kind = 'kill -9' | 'graceful stop';

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 10);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`RUNS must be a whole number of runs, got ${process.argv[2]}`);
  const postgres = await startTestPostgres();
  const mesh = await startTestMesh({ database: postgres.url });
  const started: ServeProcess[] = [];
  const serve = (): ServeProcess => {
    const next = startServeProcess(mesh.dir);
    started.push(next);
    return next;
  };
  const results: Record<Kind, number[]> = { 'kill -9': [], 'graceful stop': [] };
  try {
    let holder = serve();
    await holder.waitFor(SERVING);
    let standby = serve();
    await standby.waitFor(STANDING_BY);
    const plan: Kind[] = [...Array<Kind>(runs).fill('kill -9'), ...Array<Kind>(runs).fill('graceful stop')];
    for (const [index, kind] of plan.entries()) {
      // Ended at a moment chosen at random within the renewal period, not in step with it: after
      // kill -9 the key lives on for the age limit from the holder's last renewal.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * LEASE_TIMINGS.renewEveryMs));
      const servedBefore = (standby.stderr().match(new RegExp(SERVING, 'g')) ?? []).length;
      holder.child.kill(kind === 'kill -9' ? 'SIGKILL' : 'SIGTERM');
      const endedAt = performance.now();
      const actsAt = await waitForNth(standby, servedBefore + 1, 30_000);
      const ms = Math.round(actsAt - endedAt);
      results[kind].push(ms);
      process.stdout.write(`run ${String(index + 1).padStart(2)}  ${kind.padEnd(13)}  ${String(ms).padStart(6)} ms\n`);
      await holder.exited;
      holder = standby;
      standby = serve();
      await standby.waitFor(STANDING_BY);
    }
  } finally {
    for (const process_ of started) if (process_.child.exitCode === null && process_.child.signalCode === null) process_.child.kill('SIGKILL');
    await Promise.all(started.map((process_) => process_.exited));
    await mesh.stop();
    await postgres.stop();
  }
  process.stdout.write(`\nfailover until the standby serves (lease ${LEASE_TIMINGS.ttlMs / 1000} s, renewed every ${LEASE_TIMINGS.renewEveryMs / 1000} s, standby tries every ${LEASE_TIMINGS.contendEveryMs / 1000} s), ${runs} runs each:\n`);
  process.stdout.write(`${'after'.padEnd(13)}  ${'min'.padStart(7)}  ${'median'.padStart(7)}  ${'max'.padStart(7)}\n`);
  for (const [kind, values] of Object.entries(results)) {
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : Math.round(((sorted[sorted.length / 2 - 1] ?? 0) + (sorted[sorted.length / 2] ?? 0)) / 2);
    process.stdout.write(`${kind.padEnd(13)}  ${`${sorted[0]} ms`.padStart(7)}  ${`${median} ms`.padStart(7)}  ${`${sorted.at(-1)} ms`.padStart(7)}\n`);
  }
}

/** Resolves once `serve` has said it serves `count` times in all. */
async function waitForNth(serve: ServeProcess, count: number, timeoutMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    if ((serve.stderr().match(new RegExp(SERVING, 'g')) ?? []).length >= count) return performance.now();
    if (performance.now() - started > timeoutMs) throw new Error(`the standby did not serve within ${timeoutMs} ms; it said:\n${serve.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
