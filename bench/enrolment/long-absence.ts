import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { MeshRig } from '../../e2e/mesh-rig';
import { runCli, succeeded } from '../../e2e/run-cli';
import { DECLARATION_PULL_EXPIRES_MS } from '../../actors/shared/bus/subjects';
import type { BenchContext } from '../bench-context';
import { WatchedProcess } from '../watched-process';
import type { MeshWatch } from './mesh-watch';

/** Files the node holds before it goes away, and files its declaration holds when it comes back. */
export const ABSENCE_BEFORE = 1000;
export const ABSENCE_AFTER = 3000;

/** A running host of the bench: its process, and how to start it again on the same root. */
export interface BenchHost {
  process: WatchedProcess;
  start(): WatchedProcess;
}

/**
 * The long absence (seed 000): the node holds ABSENCE_BEFORE files, its host is stopped, its
 * declaration moves to ABSENCE_AFTER other files while it is away, and it starts again. Timed
 * from the spawn of `nox-mesh-host run` to its report on the newest declaration (seen on the
 * broker), which must have applied every new file and removed every old one in that one pass.
 * One time per run; the host is left running.
 */
export async function longAbsence(ctx: BenchContext, rig: MeshRig, watch: MeshWatch, node: string, host: BenchHost, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let run = 1; run <= runs; run += 1) {
    const before = await declare(ctx, rig, watch, node, `r${run}-before`, ABSENCE_BEFORE);
    const held = await watch.report((report) => report.node === node && report.declaration_digest === before, { timeoutMs: 120_000 });
    failIfAnyFailed(node, held.value.results);
    await host.process.stop();
    // Away for longer than a pull lives: a declaration sent in the first seconds after a stop
    // can go to the stopped host's pull (still waiting on the broker across the accounts) and
    // come again only after the acknowledgement wait, which would be measured instead of the jump.
    await new Promise((resolve) => setTimeout(resolve, DECLARATION_PULL_EXPIRES_MS + 2000));
    const after = await declare(ctx, rig, watch, node, `r${run}-after`, ABSENCE_AFTER);
    const mark = watch.mark();
    const started = performance.now();
    host.process = host.start();
    const back = await watch.report((report) => report.node === node && report.declaration_digest === after, { from: mark.reports, timeoutMs: 300_000 });
    failIfAnyFailed(node, back.value.results);
    const applied = back.value.results.filter((result) => result.outcome === 'applied' && result.key.includes(`/r${run}-after/`)).length;
    const removed = back.value.results.filter((result) => result.outcome === 'removed' && result.key.includes(`/r${run}-before/`)).length;
    if (applied !== ABSENCE_AFTER || removed !== ABSENCE_BEFORE) {
      throw new Error(`node ${node}'s first report on its return applied ${applied} of ${ABSENCE_AFTER} new files and removed ${removed} of ${ABSENCE_BEFORE} old ones: the jump was not made in one pass`);
    }
    times.push(back.at - started);
  }
  return times;
}

/** Declares `count` files under /srv/mesh-bench/`folder` on `node`; resolves to the digest the controller sent. */
async function declare(ctx: BenchContext, rig: MeshRig, watch: MeshWatch, node: string, folder: string, count: number): Promise<string> {
  const file = path.join(ctx.workDir, `${folder}.json`);
  const resources = Array.from({ length: count }, (_, index) => ({ shape: 'file', path: `/srv/mesh-bench/${folder}/f${index}`, content: { text: `${folder} ${index}\n` } }));
  await fs.writeFile(file, JSON.stringify({ resources }));
  const mark = watch.mark();
  succeeded(await runCli([process.execPath, path.join(ctx.repoDir, 'bin', 'mesh-control'), 'node', 'declare', node, file, '--dir', rig.meshDir], { cwd: ctx.repoDir }));
  return (await watch.declaration(node, { from: mark.declarations })).value.digest;
}

function failIfAnyFailed(node: string, results: ReadonlyArray<{ key: string; outcome: string; detail?: string | undefined }>): void {
  const failures = results.filter((result) => result.outcome === 'failed');
  if (failures.length > 0) throw new Error(`node ${node} failed ${failures.length} resource(s), first ${failures[0]?.key}: ${failures[0]?.detail ?? ''}`);
}
