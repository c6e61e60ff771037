/**
 * The host's whole-process apply of the 1,000 files and cf-agent's, interleaved run by run on
 * fresh roots, the disk synced before each: on a shared machine the two figures move together,
 * so they are compared in the same run. `node scripts/run-ts.cjs bench/peers/versus-cfengine.ts
 * [runs] [host]`; prints each run, the medians and the user CPU of each. The host is the one the
 * packages install when it can be built here (bench/host/host-program.ts: the single executable,
 * else the bundle with its code cache); `host` names another: a `.cjs` is run with this Node,
 * anything else as a program. The full bench runs it too (peers section, rows
 * `peers.versus-cfengine.*`).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchResources, HOST_FILES } from '../host/bench-files';
import { ensureHostProgram } from '../host/host-program';
import { runMeasured } from '../measured-command';
import { removeSettled, syncDisks } from '../remove-settled';
import { median } from '../stats';
import { cfenginePolicy } from './peer-policies';

/**
 * Both tools' apply times, run by run, in milliseconds (the same index is the same run), and
 * the user CPU of each run where it could be read (GNU time), in milliseconds.
 */
export interface Interleaved {
  host: number[];
  cf: number[];
  hostUserMs: number[];
  cfUserMs: number[];
}

/**
 * Runs the host's apply (`host`: the command line before the verb) and cf-agent's `runs` times
 * each, alternating which goes first, each on a fresh root under `workDir` (left there: the
 * caller removes it settled). Throws when either exits non-zero.
 */
export async function interleaveWithCfengine(runs: number, hostArgv: readonly [string, ...string[]], workDir: string, say: (line: string) => void = () => undefined): Promise<Interleaved> {
  const declaration = path.join(workDir, 'declaration.json');
  await fs.writeFile(declaration, JSON.stringify({ resources: benchResources(HOST_FILES) }));
  const host: number[] = [];
  const cf: number[] = [];
  const hostUserMs: number[] = [];
  const cfUserMs: number[] = [];
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
        const measured = await runMeasured([...hostArgv, 'apply', declaration, '--root', hostRoot, '--json'], { cwd: workDir });
        if (measured.result.code !== 0) throw new Error(`host apply exited ${measured.result.code}: ${measured.result.stderr.slice(0, 400)}`);
        host.push(measured.ms);
        if (measured.userMs !== null) hostUserMs.push(measured.userMs);
      } else {
        const measured = await runMeasured(['cf-agent', '--no-lock', '--file', policy], { cwd: cfDir });
        if (measured.result.code !== 0) throw new Error(`cf-agent exited ${measured.result.code}: ${measured.result.stderr.slice(0, 400)}`);
        cf.push(measured.ms);
        if (measured.userMs !== null) cfUserMs.push(measured.userMs);
      }
    }
    say(`run ${run}  host ${host.at(-1)?.toFixed(0)} ms (user ${hostUserMs.at(-1)?.toFixed(0) ?? '?'})  cf-agent ${cf.at(-1)?.toFixed(0)} ms (user ${cfUserMs.at(-1)?.toFixed(0) ?? '?'})`);
  }
  return { host, cf, hostUserMs, cfUserMs };
}

/** The host given on the command line: a `.cjs` is run with this Node, anything else as it is. */
function givenHost(file: string): [string, ...string[]] {
  const resolved = path.resolve(file);
  return resolved.endsWith('.cjs') ? [process.execPath, resolved] : [resolved];
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? '10');
  const repoDir = path.resolve(__dirname, '..', '..');
  const program = process.argv[3] !== undefined
    ? { argv: givenHost(process.argv[3]), what: path.resolve(process.argv[3]) }
    : await ensureHostProgram(repoDir, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`host: ${program.what}\n`);
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-versus-'));
  try {
    const { host, cf, hostUserMs, cfUserMs } = await interleaveWithCfengine(runs, program.argv, workDir, (line) => process.stdout.write(`${line}\n`));
    const user = hostUserMs.length > 0 && cfUserMs.length > 0 ? `; user CPU host ${median(hostUserMs).toFixed(0)} ms, cf-agent ${median(cfUserMs).toFixed(0)} ms` : '';
    process.stdout.write(`median of ${runs}: host ${median(host).toFixed(0)} ms, cf-agent ${median(cf).toFixed(0)} ms (${(median(host) / median(cf)).toFixed(2)}×)${user}\n`);
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
