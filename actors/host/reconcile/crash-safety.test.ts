import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ORIGINALS_DIR, originalsDirFor } from '../adoption/originals-dir';
import { HostStore } from '../store/host-store';
import { machineTree } from '../testing/machine-tree';
import { seededRandom } from '../../shared/testing/seeded-random';

// Crash safety, for real: the host process applying a 200-resource declaration is killed with
// SIGKILL at random instants, over and over, going round three declarations so that removals,
// adoptions and hand-backs are interrupted too: A adopts files and directories the machine had
// before the host came, B rewrites some of them and no longer declares others (handed back), and
// a release (nothing declared) hands back all of them. After every kill the store must be honest
// — everything it says it owns is on the machine as declared (nothing phantom) and everything the
// host put on the machine is owned or marked as being applied (nothing orphaned) — and the
// machine's own files must be safe: each still there, and either as the machine had it or held
// by the host with its original kept. A run to completion afterwards must converge with the
// owned record exactly what is declared, and after the release the machine is as it was.

const repo = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');
const KILLS = 24;
const MAX_ROUNDS = 60;


interface Declared { path: string; text: string; mode?: string }

function declarationOf(files: Declared[], dirs: Array<string | { path: string; mode: string }>) {
  return {
    resources: [
      ...dirs.map((dir) => (typeof dir === 'string' ? { shape: 'directory', path: dir } : { shape: 'directory', ...dir })),
      ...files.map((file) => ({ shape: 'file', path: file.path, content: { text: file.text }, ...(file.mode === undefined ? {} : { mode: file.mode }) })),
    ],
  };
}

// What the machine had before the host came: 40 files in four directories of its own, which A
// declares as they are (adopted), B rewrites in part and no longer declares in part (handed
// back); and 5 files A declares otherwise (conflicts: the machine's value wins, never written).
// They lie deeper than the host's own files, so a removal pass hands them back first, where the
// kills of a release land.
const MACHINE_MODE = '0640';
const MACHINE_DIR_MODE = '0750';
const machineDirs = Array.from({ length: 4 }, (_, i) => `/srv/m/x/y/d${i}`);
const machineFiles = Array.from({ length: 40 }, (_, i) => ({ path: `${machineDirs[i % 4]}/k${i}`, text: `the machine's k${i}\n`, mode: MACHINE_MODE }));
const conflicts = Array.from({ length: 5 }, (_, i) => ({ path: `/srv/m/c${i}`, text: `the machine's c${i}\n`, mode: MACHINE_MODE }));
const MACHINE = new Map([...machineFiles, ...conflicts].map((file) => [file.path, file]));
const machineAsA = { files: [...machineFiles, ...conflicts.map((file) => ({ path: file.path, text: `the mesh's c\n` }))], dirs: machineDirs.map((dir) => ({ path: dir, mode: MACHINE_DIR_MODE })) };
const machineAsB = { files: machineFiles.slice(0, 20).map((file) => ({ path: file.path, text: `b's ${file.text}`, mode: '0644' })), dirs: machineDirs.map((dir) => ({ path: dir, mode: '0755' })) };

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

type Which = 'A' | 'B' | 'E';
const DECLARATIONS: Record<Which, ReturnType<typeof declarationOf>> = {
  A: declarationOf([...filesA, ...machineAsA.files], [...dirsA, ...machineAsA.dirs]),
  B: declarationOf([...filesB, ...machineAsB.files], [...dirsB, ...machineAsB.dirs]),
  // A release: nothing declared.
  E: declarationOf([], []),
};

let root: string;
let files: Record<Which, string>;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'crash-root-'));
  const decls = await fs.mkdtemp(path.join(os.tmpdir(), 'crash-decl-'));
  files = { A: path.join(decls, 'a.json'), B: path.join(decls, 'b.json'), E: path.join(decls, 'e.json') };
  for (const which of ['A', 'B', 'E'] as const) await fs.writeFile(files[which], JSON.stringify(DECLARATIONS[which]));
  for (const dir of machineDirs) await fs.mkdir(path.join(root, dir), { recursive: true, mode: 0o750 });
  for (const file of MACHINE.values()) await fs.writeFile(path.join(root, file.path), file.text, { mode: Number.parseInt(file.mode, 8) });
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(path.dirname(files.A), { recursive: true, force: true });
});

function applyArgs(which: Which): string[] {
  return [bin, 'apply', files[which], '--replace', '--root', root];
}

/** Starts an apply and kills it with SIGKILL after `delayMs`; resolves with whether it was still running. */
function applyAndKill(which: Which, delayMs: number): Promise<boolean> {
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

/**
 * Starts an apply and kills it with SIGKILL as soon as its store, read as a file, satisfies
 * `when`; resolves with whether it was killed so. A random instant can miss a short window on a
 * loaded machine (the process starts later than the first apply measured); this one cannot.
 */
function applyAndKillWhen(which: Which, when: (state: { applying?: string[]; owned?: { resources?: Array<{ key: string }> } }) => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, applyArgs(which), { stdio: 'ignore' });
    let exited = false;
    child.on('exit', () => { exited = true; });
    const look = async (): Promise<void> => {
      while (!exited) {
        // A store being renamed into place can be missing or cut for a moment: look again.
        const state = await fs.readFile(path.join(STATE_DIR(), 'state.json'), 'utf8').then((text) => JSON.parse(text) as Parameters<typeof when>[0], () => undefined);
        if (state !== undefined && when(state) && !exited && child.kill('SIGKILL')) {
          child.on('close', () => resolve(true));
          return;
        }
        await new Promise((wait) => setTimeout(wait, 1));
      }
      resolve(false);
    };
    void look();
  });
}

/** Every regular file and directory under the root, outside the host's state directory, with modes. */
const onMachine = () => machineTree(root);

// What each path is declared to hold, in A or in B.
const DECLARED_TEXTS = new Map<string, string[]>();
for (const f of [...filesA, ...filesB, ...machineAsA.files, ...machineAsB.files]) DECLARED_TEXTS.set(f.path, [...(DECLARED_TEXTS.get(f.path) ?? []), f.text]);
// Directories the host creates as parents of what it declares (not resources themselves), and
// the machine's own.
const PARENTS = new Set(['/srv', '/srv/a', '/srv/b', '/var', '/var/lib', '/srv/m', '/srv/m/x', '/srv/m/x/y']);
const STATE_DIR = () => path.join(root, 'var/lib/mesh-host');
const keptCopyOf = (key: string, p: string) => path.join(originalsDirFor(STATE_DIR(), key), p);

/**
 * The machine's own files and directories are never lost: each is still there, and either as
 * the machine had it or held by the host (owned, or marked while it is being applied or handed
 * back) with the machine's original kept where the briefing line says.
 */
async function expectMachineSafe(machine: Awaited<ReturnType<typeof onMachine>>, held: Set<string>, lines: Map<string, string | undefined>): Promise<void> {
  for (const file of MACHINE.values()) {
    const key = `file:${file.path}`;
    const now = { text: machine.files.get(file.path), mode: machine.modes.get(file.path) };
    if (now.text === file.text && now.mode === file.mode) continue;
    expect({ key, now, held: held.has(key) }).toEqual({ key, now, held: true });
    const copy = keptCopyOf(key, file.path);
    expect({ key, keptAt: lines.get(key), original: await fs.readFile(copy, 'utf8').catch(() => null) }).toEqual({ key, keptAt: copy, original: file.text });
  }
  for (const dir of machineDirs) {
    const key = `directory:${dir}`;
    const mode = machine.modes.get(dir);
    if (mode === MACHINE_DIR_MODE) continue;
    expect({ key, mode, held: held.has(key) }).toEqual({ key, mode, held: true });
    const record = `${keptCopyOf(key, dir)}.meta.json`;
    const kept = await fs.readFile(record, 'utf8').then((text) => (JSON.parse(text) as { mode: string }).mode, () => null);
    expect({ key, keptAt: lines.get(key), kept }).toEqual({ key, keptAt: record, kept: MACHINE_DIR_MODE });
  }
}

async function expectHonestStore(): Promise<{ owned: Set<string>; applying: Set<string>; lines: Map<string, string | undefined> }> {
  const { state } = await new HostStore(STATE_DIR()).load();
  const owned = new Set(state.owned.resources.map((r) => r.key));
  const applying = new Set(state.applying);
  const lines = new Map((state.briefing?.lines ?? []).map((line) => [line.subject, line.original_kept_at]));
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
    if (!temporary && MACHINE.has(p)) continue;
    const accounted = owned.has(`file:${target}`) || applying.has(`file:${target}`);
    expect({ p, accounted }).toEqual({ p, accounted: true });
  }
  for (const p of machine.dirs) {
    if (PARENTS.has(p) || machineDirs.includes(p)) continue;
    expect({ p, accounted: owned.has(`directory:${p}`) || applying.has(`directory:${p}`) }).toEqual({ p, accounted: true });
  }
  await expectMachineSafe(machine, new Set([...owned, ...applying]), lines);
  // The host's own half-made work was never taken for the machine's: every line is about
  // something the machine had.
  const machineKeys = new Set([...[...MACHINE.keys()].map((p) => `file:${p}`), ...machineDirs.map((dir) => `directory:${dir}`)]);
  expect([...lines.keys()].filter((subject) => !machineKeys.has(subject))).toEqual([]);
  return { owned, applying, lines };
}

function keysOf(declared: ReturnType<typeof declarationOf>): string[] {
  return declared.resources.map((r) => `${r.shape}:${r.path}`).sort();
}

/** Every file kept under the state directory's originals folder. */
async function keptFiles(): Promise<string[]> {
  const dir = path.join(STATE_DIR(), ORIGINALS_DIR);
  const entries = await fs.readdir(dir, { recursive: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) if ((await fs.lstat(path.join(dir, entry))).isFile()) found.push(entry);
  return found.sort();
}

const seed = Number(process.env.CRASH_SEED ?? 20261201);

test(`a host killed with SIGKILL at ${KILLS} random instants always restarts to an honest store and converges (seed ${seed})`, async () => {
  const next = seededRandom(seed);
  // How long a whole apply takes here, so kills land inside it rather than after it.
  const started = performance.now();
  expect(spawnSync(process.execPath, applyArgs('A')).status).toBe(0);
  const whole = performance.now() - started;
  const killedIn: Record<Which, number> = { A: 0, B: 0, E: 0 };
  let killedMidway = 0;
  // Kills that left a hand-back under way: one of the machine's keys marked, and not owned.
  let killedHandingBack = 0;
  const machineKeys = [...machineFiles.map((file) => `file:${file.path}`), ...machineDirs.map((dir) => `directory:${dir}`)];
  for (let round = 0; killedMidway < KILLS && round < MAX_ROUNDS; round += 1) {
    // B after A rewrites and hands back; E after B hands back the rest and removes; A after E
    // adopts again.
    const which = (['B', 'E', 'A'] as const)[round % 3] as Which;
    // A release hands back first (see machineFiles), so its kills are drawn from the start.
    if (await applyAndKill(which, 150 + next() * whole * (which === 'E' ? 0.7 : 1))) {
      killedMidway += 1;
      killedIn[which] += 1;
    }
    const { owned, applying } = await expectHonestStore();
    if (machineKeys.some((key) => applying.has(key) && !owned.has(key))) killedHandingBack += 1;
  }
  // No random instant landed in a hand-back: adopt the machine's files again (A) and kill the
  // release the moment its store shows one under way.
  for (let attempt = 0; killedHandingBack === 0 && attempt < 10; attempt += 1) {
    expect(spawnSync(process.execPath, applyArgs('A')).status).toBe(0);
    const handingBack = (state: Parameters<Parameters<typeof applyAndKillWhen>[1]>[0]): boolean => {
      const owned = new Set((state.owned?.resources ?? []).map((resource) => resource.key));
      return machineKeys.some((key) => (state.applying ?? []).includes(key) && !owned.has(key));
    };
    if (await applyAndKillWhen('E', handingBack)) killedIn.E += 1;
    const { owned, applying } = await expectHonestStore();
    if (machineKeys.some((key) => applying.has(key) && !owned.has(key))) killedHandingBack += 1;
  }
  // The kills must have landed while the host was running, or this test proves nothing; and in
  // each kind of run, so removals, hand-backs and adoptions were all cut short.
  expect(killedMidway).toBeGreaterThanOrEqual(KILLS);
  expect(Object.values(killedIn).every((kills) => kills > 0)).toBe(true);
  expect(killedHandingBack).toBeGreaterThan(0);

  // Restart and run to completion: the machine converges and the record is exact.
  for (const which of ['A', 'B', 'E'] as const) {
    const run = spawnSync(process.execPath, applyArgs(which), { encoding: 'utf8' });
    const notDone = run.stdout.split('\n').filter((line) => /^(failed|kept|refused) /.test(line)).map((line) => line.split(/\s+/).slice(0, 2).join(' '));
    // Only the conflicts A declares are left as the machine has them.
    const conflicted = which === 'A' ? conflicts.map((file) => `kept file:${file.path}`) : [];
    expect({ status: run.status, notDone, stderr: run.stderr }).toEqual({ status: 0, notDone: conflicted, stderr: '' });
    const { owned, applying, lines } = await expectHonestStore();
    const declared = DECLARATIONS[which];
    expect([...owned].sort()).toEqual(keysOf(declared).filter((key) => !conflicted.includes(`kept ${key}`)));
    expect([...applying]).toEqual([]);
    const machine = await onMachine();
    const expected = new Map<string, string>([...MACHINE.values()].map((file) => [file.path, file.text]));
    for (const f of which === 'A' ? [...filesA, ...machineFiles] : which === 'B' ? [...filesB, ...machineAsB.files] : []) expected.set(f.path, f.text);
    expect(Object.fromEntries([...machine.files].sort())).toEqual(Object.fromEntries([...expected].sort()));
    // What the host holds of the machine's is exactly what it adopted and still declares.
    const adopted = declared.resources.map((r) => `${r.shape}:${r.path}`).filter((key) => /^(file|directory):\/srv\/m\//.test(key));
    expect([...lines.keys()].sort()).toEqual(adopted.sort());
  }
  // Released: every file and directory the machine had is as it had them, and nothing is kept.
  const machine = await onMachine();
  for (const file of MACHINE.values()) expect({ path: file.path, mode: machine.modes.get(file.path) }).toEqual({ path: file.path, mode: file.mode });
  for (const dir of machineDirs) expect({ dir, mode: machine.modes.get(dir) }).toEqual({ dir, mode: MACHINE_DIR_MODE });
  expect(await keptFiles()).toEqual([]);
}, 240_000);
