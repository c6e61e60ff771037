import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { filesUnder } from './files-under';
import { MeshRig } from './mesh-rig';
import { done, notYet, until } from './until';

// Seed 000 leaves "a node returning after months applies a very large jump in one go" as
// correct and untested. One machine, real processes: it applies a small declaration, its host
// is stopped, the declaration moves on by thousands of resources over several generations
// while it is away, and it comes back. It must take the newest declaration only (the stream
// keeps one per node), converge in its first pass on it, and touch nothing it did not make.

const NAME = 'a';
const BEFORE = 200;
const AFTER = 3000;

/** `count` small files under /srv/`folder`, each saying which generation declared it. */
function files(folder: string, count: number, generation: string): object[] {
  return [
    { shape: 'directory', path: `/srv/${folder}`, mode: '0755' },
    ...Array.from({ length: count }, (_, index) => ({ shape: 'file', path: `/srv/${folder}/f${index}`, content: { text: `${generation} ${index}\n` }, mode: '0644' })),
  ];
}

/** The pass line of the jump: the new folder and its files and the ten kept files rewritten, the old ones removed, in one pass. */
function isTheJump(line: string): boolean {
  return new RegExp(`\\b${AFTER + 11} applied\\b`).test(line) && new RegExp(`\\b${BEFORE - 10} removed\\b`).test(line);
}

describe('a node away while its declaration moved by thousands of resources', () => {
  let parent: string;
  let rig: MeshRig;
  let node: string;
  const declare = async (name: string, resources: object[]): Promise<string> => {
    const file = path.join(parent, `${name}.json`);
    await fs.writeFile(file, JSON.stringify({ resources }));
    return (await rig.declare(node, file)).stdout;
  };
  const held = (): Promise<string[]> => filesUnder(path.join(rig.hostRoot(NAME), 'srv'), []);

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-absence-'));
    rig = new MeshRig({ dir: parent, hosts: [NAME] });
    await rig.start();
    node = (await rig.enrol(NAME, (await rig.issueToken({ new: true })).token)).node;
  }, 90_000);

  afterAll(async () => {
    await rig?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  test('comes back, takes only the newest declaration, converges on it in one pass and keeps what the operator made', async () => {
    await declare('first', files('old', BEFORE, 'first'));
    const first = rig.host(NAME);
    await first.waitFor(new RegExp(`pass \\(declaration\\): .*\\b${BEFORE + 1} applied\\b`), { timeoutMs: 60_000 });
    expect(await held()).toHaveLength(BEFORE);
    await rig.stopHost(NAME);
    // What the operator put beside the mesh's files while the machine was away.
    await fs.writeFile(path.join(rig.hostRoot(NAME), 'srv', 'old', 'operator-notes'), 'mine\n');

    await declare('second', files('middle', AFTER, 'second'));
    const last = [...files('new', AFTER, 'third'), ...files('old', 10, 'third')];
    expect(await declare('third', last)).toMatch(new RegExp(`${AFTER + 12} resource\\(s\\) declared`));

    const log = await rig.startHost(NAME);
    await until('the host to report a pass that converged on the third declaration', async () => {
      const now = await held();
      return now.length === AFTER + 10 + 1 && now.every((entry) => !entry.startsWith('middle')) ? done(now) : notYet(`${now.length} entries under /srv; log:\n${log.output().slice(-2000)}`);
    }, { timeoutMs: 120_000 });
    const passes = await until('the host to log the pass over the third declaration', async () => {
      const lines = log.output().split('\n').filter((line) => /\bpass \(/.test(line));
      return lines.some(isTheJump) ? done(lines) : notYet(lines.join('\n') || '(no pass yet)');
    }, { timeoutMs: 60_000 });

    // Exactly the third declaration's files, and the operator's note, and nothing of the second.
    const now = await held();
    expect(now).toEqual(expect.arrayContaining(['new/f0', `new/f${AFTER - 1}`, 'old/f0', 'old/f9', 'old/operator-notes']));
    expect(now.filter((entry) => entry.startsWith('middle'))).toEqual([]);
    expect(now.filter((entry) => /^old\/f\d+$/.test(entry))).toHaveLength(10);
    expect(await fs.readFile(path.join(rig.hostRoot(NAME), 'srv', 'new', 'f7'), 'utf8')).toBe('third 7\n');
    expect(await fs.readFile(path.join(rig.hostRoot(NAME), 'srv', 'old', 'operator-notes'), 'utf8')).toBe('mine\n');
    // One pass did the jump: no pass after it changed or failed anything.
    const jump = passes.findIndex(isTheJump);
    expect(passes.slice(jump + 1).filter((line) => /applied|failed|removed/.test(line))).toEqual([]);
    expect(passes[jump]).not.toMatch(/failed|refused/);
    expect((await rig.owned(NAME)).resources.filter((resource) => resource.key.startsWith('file:/srv/'))).toHaveLength(AFTER + 10);
  }, 240_000);

  test('a jump too large for one message is refused whole, saying what to do, and the node keeps what it has', async () => {
    const tryDeclaring = async (name: string, count: number): Promise<string> => {
      const file = path.join(parent, `${name}.json`);
      await fs.writeFile(file, JSON.stringify({ resources: files(name, count, name) }));
      const refused = await rig.control(['node', 'declare', node, file]);
      expect({ code: refused.code, stack: refused.stderr.includes('    at ') }).toEqual({ code: 1, stack: false });
      return refused.stderr;
    };
    // Too large to ask the controller at all, and small enough to ask but too large once signed.
    expect(await tryDeclaring('huge', 20_000)).toMatch(/request is .*over the 1 MiB the broker carries in one message[\s\S]*split the resources into modules/);
    expect(await tryDeclaring('large', 8000)).toMatch(/declaration, signed, is .*over the 1 MiB the broker carries in one message[\s\S]*fewer or smaller resources/);
    const nodes = await rig.nodes();
    const log = rig.host(NAME);
    const mark = log.mark();
    await rig.declare(node, path.join(parent, 'third.json'));
    const pass = await log.waitFor(/pass \(declaration\): [^\n]*/, { from: mark, timeoutMs: 60_000 });
    expect(pass[0]).toMatch(/^pass \(declaration\): \d+ unchanged$/);
    expect((await held()).filter((entry) => entry.startsWith('huge') || entry.startsWith('large'))).toEqual([]);
    expect(nodes.find((listed) => listed.name === node)?.lifecycle_state).toBe('enrolled');
  }, 120_000);
});
