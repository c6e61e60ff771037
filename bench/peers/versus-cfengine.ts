/**
 * The host's whole-process apply of the 1,000 files and cf-agent's, interleaved run by run on
 * fresh roots, the disk synced before each: on a shared machine the two figures move together,
 * so they are compared in the same run. `node scripts/run-ts.cjs bench/peers/versus-cfengine.ts
 * [runs] [bundle]`; prints each run and the medians. The full bench runs it too (peers section,
 * rows `peers.versus-cfengine.*`).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchResources, HOST_FILES } from '../host/bench-files';
import { ensureBundle } from '../host/host-bundle';
import { runMeasured } from '../measured-command';
import { removeSettled, syncDisks } from '../remove-settled';
import { median } from '../stats';
import { cfenginePolicy } from './peer-policies';

/** Both tools' apply times, run by run, in milliseconds (the same index is the same run). */
export interface Interleaved {
  host: number[];
  cf: number[];
}

/**
 * Runs the bundled host's apply and cf-agent's `runs` times each, alternating which goes first,
 * each on a fresh root under `workDir` (left there: the caller removes it settled). Throws when
 * either exits non-zero.
 */
export async function interleaveWithCfengine(runs: number, bundle: string, workDir: string, say: (line: string) => void = () => undefined): Promise<Interleaved> {
  const declaration = path.join(workDir, 'declaration.json');
  await fs.writeFile(declaration, JSON.stringify({ resources: benchResources(HOST_FILES) }));
  const host: number[] = [];
  const cf: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const hostRoot = path.join(workDir, `host-${run}`);
    await fs.mkdir(hostRoot);
    const cfDir = path.join(workDir, `cf-${run}`);
    await fs.mkdir(path.join(cfDir, 'root', 'srv'), { recursive: true });
    const policy = path.join(cfDir, 'policy.cf');
    await fs.writeFile(policy, cfenginePolicy(path.join(cfDir, 'root'), HOST_FILES), { mode: 0o600 });
    // Which goes first alternates, so neither always follows the other's writes.
    const order = run % 2 === 0 ? ['host', 'cf'] : ['cf', 'host'];
    for (const which of order) {
      await syncDisks();
      if (which === 'host') {
        const measured = await runMeasured([process.execPath, bundle, 'apply', declaration, '--root', hostRoot, '--json'], { cwd: workDir });
        if (measured.result.code !== 0) throw new Error(`host apply exited ${measured.result.code}: ${measured.result.stderr.slice(0, 400)}`);
        host.push(measured.ms);
      } else {
        const measured = await runMeasured(['cf-agent', '--no-lock', '--file', policy], { cwd: cfDir });
        if (measured.result.code !== 0) throw new Error(`cf-agent exited ${measured.result.code}: ${measured.result.stderr.slice(0, 400)}`);
        cf.push(measured.ms);
      }
    }
    say(`run ${run}  host ${host.at(-1)?.toFixed(0)} ms  cf-agent ${cf.at(-1)?.toFixed(0)} ms`);
  }
  return { host, cf };
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? '10');
  const repoDir = path.resolve(__dirname, '..', '..');
  const bundle = process.argv[3] !== undefined ? path.resolve(process.argv[3]) : (await ensureBundle(repoDir, (line) => process.stderr.write(`${line}\n`)));
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-versus-'));
  try {
    const { host, cf } = await interleaveWithCfengine(runs, bundle, workDir, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(`median of ${runs}: host ${median(host).toFixed(0)} ms, cf-agent ${median(cf).toFixed(0)} ms (${(median(host) / median(cf)).toFixed(2)}×)\n`);
  } finally {
    await removeSettled(workDir);
  }
}

// Run as a script (scripts/run-ts.cjs puts the file first in argv), not when the bench imports it.
if (path.resolve(process.argv[1] ?? '') === __filename) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  });
}
