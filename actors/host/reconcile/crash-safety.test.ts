import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HostStore } from '../store/host-store';

// Crash safety, for real: the host process applying a 200-resource declaration is killed with
// SIGKILL at random instants, over and over, alternating between two declarations so that
// removals are interrupted too. After every kill the store must be honest — everything it says
// it owns is on the machine as declared (nothing phantom) and everything the host put on the
// machine is owned or marked as being applied (nothing orphaned) — and a run to completion
// afterwards must converge with the owned record exactly what is declared.

const repo = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');
const KILLS = 20;
const MAX_ROUNDS = 40;

// A small seeded generator, so a failure can be replayed (the seed is in the test name).
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Declared { path: string; text: string }

function declarationOf(files: Declared[], dirs: string[]) {
  return {
    resources: [
      ...dirs.map((dir) => ({ shape: 'directory', path: dir })),
      ...files.map((file) => ({ shape: 'file', path: file.path, content: { text: file.text } })),
    ],
  };
}

// A: 180 files in 20 directories. B: half of A's files (a quarter as they are, a quarter with
// other content), 100 new ones, and its own directories, so switching between them removes,
// creates and rewrites files the host owns.
const dirsA = Array.from({ length: 20 }, (_, i) => `/srv/a/d${i}`);
const filesA = Array.from({ length: 180 }, (_, i) => ({ path: `/srv/a/d${i % 20}/f${i}`, text: `a ${i}\n` }));
// B keeps A's directories (half of A's files stay in them) and adds its own.
const dirsB = [...dirsA, ...Array.from({ length: 10 }, (_, i) => `/srv/b/d${i}`)];
const filesB = [
  ...filesA.slice(0, 45),
  ...filesA.slice(45, 90).map((file) => ({ path: file.path, text: `b's ${file.text}` })),
  ...Array.from({ length: 100 }, (_, i) => ({ path: `/srv/b/d${i % 10}/g${i}`, text: `b ${i}\n` })),
];

let root: string;
let files: Record<'A' | 'B', string>;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'crash-root-'));
  const decls = await fs.mkdtemp(path.join(os.tmpdir(), 'crash-decl-'));
  files = { A: path.join(decls, 'a.json'), B: path.join(decls, 'b.json') };
  await fs.writeFile(files.A, JSON.stringify(declarationOf(filesA, dirsA)));
  await fs.writeFile(files.B, JSON.stringify(declarationOf(filesB, dirsB)));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(path.dirname(files.A), { recursive: true, force: true });
});

function applyArgs(which: 'A' | 'B'): string[] {
  return [bin, 'apply', files[which], '--replace', '--root', root];
}

/** Starts an apply and kills it with SIGKILL after `delayMs`; resolves with whether it was still running. */
function applyAndKill(which: 'A' | 'B', delayMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, applyArgs(which), { stdio: 'ignore' });
    let exited = false;
    child.on('exit', () => { exited = true; });
    setTimeout(() => {
      const killed = !exited && child.kill('SIGKILL');
      child.on('close', () => resolve(killed));
      if (exited) resolve(false);
    }, delayMs);
  });
}

/** Every regular file and directory under the root, outside the host's state directory. */
async function onMachine(): Promise<{ files: Map<string, string>; dirs: Set<string> }> {
  const found = { files: new Map<string, string>(), dirs: new Set<string>() };
  async function walk(dir: string): Promise<void> {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const declared = `/${path.relative(root, full)}`;
      if (declared.startsWith('/var/lib/mesh-host')) continue;
      if (entry.isDirectory()) {
        found.dirs.add(declared);
        await walk(full);
      } else {
        found.files.set(declared, await fs.readFile(full, 'utf8'));
      }
    }
  }
  await walk(root);
  return found;
}

// What each path is declared to hold, in A or in B.
const DECLARED_TEXTS = new Map<string, string[]>();
for (const f of [...filesA, ...filesB]) DECLARED_TEXTS.set(f.path, [...(DECLARED_TEXTS.get(f.path) ?? []), f.text]);
// Directories the host creates as parents of what it declares (not resources themselves).
const PARENTS = new Set(['/srv', '/srv/a', '/srv/b', '/var', '/var/lib']);

async function expectHonestStore(): Promise<{ owned: Set<string>; applying: Set<string> }> {
  const { state } = await new HostStore(path.join(root, 'var/lib/mesh-host')).load();
  const owned = new Set(state.owned.resources.map((r) => r.key));
  const applying = new Set(state.applying);
  const machine = await onMachine();
  // Nothing phantom: every owned file is there with the text it was declared with.
  for (const key of owned) {
    const p = key.slice(key.indexOf(':') + 1);
    if (key.startsWith('file:')) expect({ key, declared: DECLARED_TEXTS.get(p)?.includes(machine.files.get(p) as string) }).toEqual({ key, declared: true });
    else expect({ key, present: machine.dirs.has(p) }).toEqual({ key, present: true });
  }
  // Nothing orphaned: every file and directory the host made is owned or marked applying.
  // A temporary file of a write cut short belongs to the file it was for (one the host owns, or
  // one it marked before writing), and must be gone by the time that file is settled.
  for (const p of machine.files.keys()) {
    const temporary = /^(.*)\/\.(.+)\.nox-[0-9a-f]{12}\.tmp$/.exec(p);
    const target = temporary ? `${temporary[1]}/${temporary[2]}` : p;
    const accounted = owned.has(`file:${target}`) || applying.has(`file:${target}`);
    expect({ p, accounted }).toEqual({ p, accounted: true });
  }
  for (const p of machine.dirs) {
    if (PARENTS.has(p)) continue;
    expect({ p, accounted: owned.has(`directory:${p}`) || applying.has(`directory:${p}`) }).toEqual({ p, accounted: true });
  }
  // The host's own half-made work was never taken for the machine's.
  expect(state.briefing).toBeNull();
  return { owned, applying };
}

function keysOf(declared: ReturnType<typeof declarationOf>): string[] {
  return declared.resources.map((r) => `${r.shape}:${r.path}`).sort();
}

const seed = Number(process.env.CRASH_SEED ?? 20261201);

test(`a host killed with SIGKILL at ${KILLS} random instants always restarts to an honest store and converges (seed ${seed})`, async () => {
  const next = random(seed);
  // How long a whole apply takes here, so kills land inside it rather than after it.
  const started = performance.now();
  expect(spawnSync(process.execPath, applyArgs('A')).status).toBe(0);
  const whole = performance.now() - started;
  let killedMidway = 0;
  for (let round = 0; killedMidway < KILLS && round < MAX_ROUNDS; round += 1) {
    const which = round % 2 === 0 ? 'B' : 'A';
    if (await applyAndKill(which, 150 + next() * whole)) killedMidway += 1;
    await expectHonestStore();
  }
  // The kills must have landed while the host was running, or this test proves nothing.
  expect(killedMidway).toBe(KILLS);

  // Restart and run to completion: the machine converges and the record is exact.
  for (const which of ['A', 'B'] as const) {
    const run = spawnSync(process.execPath, applyArgs(which), { encoding: 'utf8' });
    const notDone = run.stdout.split('\n').filter((line) => /^(failed|kept|refused) /.test(line));
    expect({ status: run.status, notDone, stderr: run.stderr }).toEqual({ status: 0, notDone: [], stderr: '' });
    const { owned, applying } = await expectHonestStore();
    const declared = which === 'A' ? declarationOf(filesA, dirsA) : declarationOf(filesB, dirsB);
    expect([...owned].sort()).toEqual(keysOf(declared));
    expect([...applying]).toEqual([]);
    const machine = await onMachine();
    expect([...machine.files.keys()].sort()).toEqual((which === 'A' ? filesA : filesB).map((f) => f.path).sort());
    for (const f of which === 'A' ? filesA : filesB) expect({ path: f.path, text: machine.files.get(f.path) }).toEqual({ path: f.path, text: f.text });
  }
}, 180_000);
