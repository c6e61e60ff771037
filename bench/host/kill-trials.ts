import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HostStore } from '../../actors/host/store/host-store';
import { machineTree } from '../../actors/host/testing/machine-tree';
import { seededRandom } from '../../actors/shared/testing/seeded-random';

// Crash safety as a figure: the host applying a declaration by hand is killed with SIGKILL at a
// random instant, then run again to completion, and the trial counts when the machine and the
// store are then exactly as declared. The declarations alternate, so that kills land in
// removals as well as applies and rewrites. The seeded kill -9 test
// (actors/host/reconcile/crash-safety.test.ts) checks the store after every kill; this counts
// how often, over many more kills, the next run converges exactly.

/** What the trials found. */
export interface KillTrials {
  trials: number;
  /** Trials whose kill landed while the host was still running. */
  killedMidway: number;
  /** Trials after which a run to completion left the machine and the store exactly as declared. */
  converged: number;
  /** The first few trials that did not converge, and how. */
  failures: string[];
}

interface Declared { path: string; text: string }

const STATE_DIR = '/var/lib/mesh-host';
// A: 200 files in 10 directories. B: half of A as it is, a quarter rewritten, 100 new files in
// directories of its own; so going from A to B removes 50 files and going back removes 100.
const dirsA = Array.from({ length: 10 }, (_, i) => `/srv/k/a${i}`);
const filesA: Declared[] = Array.from({ length: 200 }, (_, i) => ({ path: `/srv/k/a${i % 10}/f${i}`, text: `a ${i}\n` }));
const dirsB = [...dirsA, ...Array.from({ length: 5 }, (_, i) => `/srv/k/b${i}`)];
const filesB: Declared[] = [
  ...filesA.slice(0, 100),
  ...filesA.slice(100, 150).map((file) => ({ path: file.path, text: `b's ${file.text}` })),
  ...Array.from({ length: 100 }, (_, i) => ({ path: `/srv/k/b${i % 5}/g${i}`, text: `b ${i}\n` })),
];
const PARENTS = new Set(['/srv', '/srv/k', '/var', '/var/lib', STATE_DIR]);

function declarationOf(files: readonly Declared[], dirs: readonly string[]): { resources: unknown[] } {
  return {
    resources: [...dirs.map((dir) => ({ shape: 'directory', path: dir })), ...files.map((file) => ({ shape: 'file', path: file.path, content: { text: file.text } }))],
  };
}


/**
 * Runs `trials` kill-and-converge trials of `argv0` (the host, as `[node, bundle]`) in a root
 * under `workDir`; `say` hears progress every hundred trials.
 */
export async function killTrials(argv0: readonly string[], workDir: string, trials: number, say: (line: string) => void, seed = 20261203): Promise<KillTrials> {
  const root = path.join(workDir, 'kill-root');
  await fs.mkdir(root, { recursive: true });
  const files = { A: path.join(workDir, 'kill-a.json'), B: path.join(workDir, 'kill-b.json') };
  await fs.writeFile(files.A, JSON.stringify(declarationOf(filesA, dirsA)));
  await fs.writeFile(files.B, JSON.stringify(declarationOf(filesB, dirsB)));
  const args = (which: 'A' | 'B') => [...argv0.slice(1), 'apply', files[which], '--replace', '--root', root];
  const node = argv0[0] as string;

  // How long a whole apply takes here, so the kills land inside one rather than after it.
  const started = performance.now();
  const first = spawnSync(node, args('A'), { encoding: 'utf8' });
  if (first.status !== 0) throw new Error(`the first apply failed (${first.status}): ${first.stderr.slice(0, 300)}`);
  const whole = performance.now() - started;

  const next = seededRandom(seed);
  const result: KillTrials = { trials, killedMidway: 0, converged: 0, failures: [] };
  for (let trial = 0; trial < trials; trial += 1) {
    const which = trial % 2 === 0 ? 'B' : 'A';
    if (await runAndKill(node, args(which), next() * whole)) result.killedMidway += 1;
    const again = spawnSync(node, args(which), { encoding: 'utf8' });
    const wrong = again.status === 0 ? await differences(root, which) : [`the run after the kill exited ${again.status}: ${again.stderr.slice(0, 200)}`];
    if (wrong.length === 0) result.converged += 1;
    else if (result.failures.length < 5) result.failures.push(`trial ${trial} (${which}): ${wrong.slice(0, 3).join('; ')}`);
    if ((trial + 1) % 100 === 0) say(`host: ${trial + 1} of ${trials} kills, ${result.converged} converged exactly`);
  }
  return result;
}

/** Starts the host and kills it with SIGKILL after `delayMs`; resolves with whether it was still running. */
function runAndKill(node: string, args: readonly string[], delayMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(node, args, { stdio: 'ignore' });
    let exited = false;
    child.once('exit', () => { exited = true; });
    setTimeout(() => {
      if (exited) {
        resolve(false);
        return;
      }
      child.once('close', () => resolve(true));
      child.kill('SIGKILL');
    }, delayMs);
  });
}

/** How the machine and the store differ from declaration `which`, held exactly; empty when they do not. */
async function differences(root: string, which: 'A' | 'B'): Promise<string[]> {
  const files = which === 'A' ? filesA : filesB;
  const dirs = which === 'A' ? dirsA : dirsB;
  const wrong: string[] = [];
  const { state } = await new HostStore(path.join(root, STATE_DIR)).load();
  const owned = state.owned.resources.map((entry) => entry.key).sort();
  const declared = [...dirs.map((dir) => `directory:${dir}`), ...files.map((file) => `file:${file.path}`)].sort();
  if (owned.join('\n') !== declared.join('\n')) wrong.push(`owns ${owned.length} resources, ${declared.length} declared`);
  if (state.applying.length > 0) wrong.push(`${state.applying.length} keys still marked applying`);
  if (state.briefing !== null) wrong.push('took some of its own work for the machine\'s (a briefing)');
  const found = await machineTree(root, STATE_DIR);
  const expected = new Map(files.map((file) => [file.path, file.text]));
  for (const [file, text] of found.files) if (expected.get(file) !== text) wrong.push(`${file} is on the machine ${expected.has(file) ? 'with other content' : 'and not declared'}`);
  for (const file of expected.keys()) if (!found.files.has(file)) wrong.push(`${file} is missing`);
  const expectedDirs = new Set(dirs);
  for (const dir of found.dirs) if (!expectedDirs.has(dir) && !PARENTS.has(dir)) wrong.push(`directory ${dir} is on the machine and not declared`);
  return wrong;
}
