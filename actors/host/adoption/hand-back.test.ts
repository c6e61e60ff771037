import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Briefing } from '../../../schema/briefing';
import type { HostState } from '../../../schema/host-state';
import type { ResourceResult } from '../../../schema/report';
import { emptyHostState } from '../../../schema/host-state';
import { envelopeDigest, generateNodeIdentity, generateSigningKeyPair, ready, sealEnvelope } from '../../shared/crypto';
import { HostStore } from '../store/host-store';
import { ORIGINALS_DIR } from './originals-dir';

// Handing back what adoption took over, as a person sees it: bin/nox-mesh-host in a real
// process against a temporary folder standing in for the machine (--root), with the machine's
// own files made there first, owned by someone else and with modes of their own.

const repo = path.resolve(__dirname, '..', '..', '..');
// The machine's own files belong to an account that is not the host's default (root).
const THEIRS = 1234;
const THEN = new Date('2020-01-02T03:04:05Z');

let root: string;
let stateDir: string;
let declarations = 0;

function host(...args: string[]) {
  const run = spawnSync(process.execPath, [path.join(repo, 'bin', 'nox-mesh-host'), ...args, '--root', root], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `apply --replace` of exactly these resources, as JSON: what the host did with each. */
async function hold(resources: unknown[]): Promise<Map<string, ResourceResult>> {
  const file = path.join(path.dirname(root), `${path.basename(root)}-${(declarations += 1)}.json`);
  await fs.writeFile(file, JSON.stringify({ resources }));
  const run = host('apply', file, '--replace', '--json');
  expect({ stderr: run.stderr }).toEqual({ stderr: '' });
  const report = JSON.parse(run.stdout) as { results: ResourceResult[] };
  return new Map(report.results.map((result) => [result.key, result]));
}

function briefing(): Briefing | null {
  return (JSON.parse(host('briefing', '--json').stdout) as { briefing: Briefing | null }).briefing;
}

/** What the state directory still keeps of the machine's originals. */
async function kept(): Promise<string[]> {
  const entries = await fs.readdir(path.join(stateDir, ORIGINALS_DIR), { recursive: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) if ((await fs.stat(path.join(stateDir, ORIGINALS_DIR, entry))).isFile()) files.push(entry);
  return files;
}

/** A file of the machine's own: its content, mode, owner and time. */
async function theirs(at: string, text: string, mode: number): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, at)), { recursive: true });
  await fs.writeFile(path.join(root, at), text);
  await fs.chmod(path.join(root, at), mode);
  await fs.chown(path.join(root, at), THEIRS, THEIRS);
  await fs.utimes(path.join(root, at), THEN, THEN);
}

async function looksAt(at: string): Promise<{ mode: string; uid: number; gid: number; text?: string; mtime?: string }> {
  const stats = await fs.lstat(path.join(root, at));
  const facts = { mode: (stats.mode & 0o7777).toString(8), uid: stats.uid, gid: stats.gid };
  return stats.isFile() ? { ...facts, text: await fs.readFile(path.join(root, at), 'utf8'), mtime: stats.mtime.toISOString() } : facts;
}

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'hand-back-'));
  stateDir = path.join(root, 'var/lib/mesh-host');
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
  for (const name of await fs.readdir(path.dirname(root))) {
    if (name.startsWith(`${path.basename(root)}-`)) await fs.rm(path.join(path.dirname(root), name), { force: true });
  }
});

describe('handing back what adoption took over', () => {
  test('an adopted file no longer declared gets the machine\'s content, mode, owner and time back, says so, and leaves no line or copy', async () => {
    await theirs('/etc/app.conf', 'the machine\'s own\n', 0o640);
    const adopted = await hold([{ shape: 'file', path: '/etc/app.conf', content: { text: 'the machine\'s own\n' }, mode: '0640', owner: `${THEIRS}`, group: `${THEIRS}` }]);
    expect(adopted.get('file:/etc/app.conf')).toMatchObject({ outcome: 'unchanged', detail: expect.stringMatching(/^adopted: /) });
    // A later declaration changes all of it: the host writes over what it now owns.
    await hold([{ shape: 'file', path: '/etc/app.conf', content: { text: 'declared\n' }, mode: '0644' }]);
    expect(await looksAt('/etc/app.conf')).toMatchObject({ text: 'declared\n', mode: '644', uid: 0 });

    const undeclared = await hold([]);
    expect(undeclared.get('file:/etc/app.conf')).toMatchObject({ outcome: 'handed_back', detail: expect.stringMatching(/^handed back the machine's original \(content, mode 0640, owner 1234:1234\)/) });
    expect(await looksAt('/etc/app.conf')).toEqual({ text: 'the machine\'s own\n', mode: '640', uid: THEIRS, gid: THEIRS, mtime: THEN.toISOString() });
    expect(briefing()).toBeNull();
    expect(await kept()).toEqual([]);
    expect(JSON.parse(host('owned', '--json').stdout)).toMatchObject({ resources: [] });
  });

  test('the text output says handed back', async () => {
    await theirs('/etc/motd', 'hello\n', 0o600);
    await hold([{ shape: 'file', path: '/etc/motd', content: { text: 'hello\n' }, mode: '0600', owner: `${THEIRS}`, group: `${THEIRS}` }]);
    const file = path.join(path.dirname(root), `${path.basename(root)}-empty.json`);
    await fs.writeFile(file, JSON.stringify({ resources: [] }));
    const run = host('apply', file, '--replace');
    expect(run.stdout).toMatch(/^handed_back\s+file:\/etc\/motd\s+handed back the machine's original/m);
    expect(run.stdout).toMatch(/^1 handed_back /m);
    expect(await looksAt('/etc/motd')).toMatchObject({ text: 'hello\n', mode: '600' });
  });

  test('an adopted directory no longer declared gets its mode and owner back and stays, with what the machine keeps in it', async () => {
    await theirs('/srv/data/notes.txt', 'the machine\'s notes\n', 0o600);
    await fs.chmod(path.join(root, 'srv/data'), 0o750);
    await fs.chown(path.join(root, 'srv/data'), THEIRS, THEIRS);
    await hold([{ shape: 'directory', path: '/srv/data', mode: '0750', owner: `${THEIRS}`, group: `${THEIRS}` }]);
    await hold([{ shape: 'directory', path: '/srv/data', mode: '0755' }]);
    expect(await looksAt('/srv/data')).toEqual({ mode: '755', uid: 0, gid: 0 });

    const undeclared = await hold([]);
    expect(undeclared.get('directory:/srv/data')).toMatchObject({ outcome: 'handed_back', detail: expect.stringMatching(/mode 0750, owner 1234:1234/) });
    expect(await looksAt('/srv/data')).toEqual({ mode: '750', uid: THEIRS, gid: THEIRS });
    expect(await looksAt('/srv/data/notes.txt')).toMatchObject({ text: 'the machine\'s notes\n' });
    expect(briefing()).toBeNull();
    expect(await kept()).toEqual([]);
  });

  test('a conflict resolved later no longer says nothing was written, and what the machine had is handed back in the end', async () => {
    await theirs('/etc/hosts', '127.0.0.1 by hand\n', 0o644);
    const declared = [{ shape: 'file', path: '/etc/hosts', content: { text: 'mesh hosts\n' } }];
    expect((await hold(declared)).get('file:/etc/hosts')).toMatchObject({ outcome: 'kept' });
    expect(briefing()?.lines).toEqual([expect.objectContaining({ status: 'kept', detail: expect.stringMatching(/nothing was written/) })]);

    // The person lets the declaration win, as the briefing says: the machine's file goes.
    await fs.rm(path.join(root, 'etc/hosts'));
    expect((await hold(declared)).get('file:/etc/hosts')).toMatchObject({ outcome: 'applied' });
    const resolved = briefing();
    expect(resolved?.lines).toEqual([expect.objectContaining({ status: 'ok', detail: expect.stringMatching(/^resolved \(was kept\): /) })]);
    expect(resolved?.lines[0]?.detail).not.toMatch(/nothing was written/);
    expect(JSON.parse(host('briefing', '--json').stdout)).toMatchObject({ outcome: 'ok' });

    expect((await hold([])).get('file:/etc/hosts')).toMatchObject({ outcome: 'handed_back' });
    expect(await looksAt('/etc/hosts')).toMatchObject({ text: '127.0.0.1 by hand\n', uid: THEIRS });
    expect(briefing()).toBeNull();
  });

  test('a conflict whose resource is no longer declared loses its line and its copy, and the machine keeps its value', async () => {
    await theirs('/etc/hosts', '127.0.0.1 by hand\n', 0o644);
    await hold([{ shape: 'file', path: '/etc/hosts', content: { text: 'mesh hosts\n' } }]);
    expect(await kept()).not.toEqual([]);
    const undeclared = await hold([]);
    expect(undeclared.size).toBe(0);
    expect(briefing()).toBeNull();
    expect(await kept()).toEqual([]);
    expect(await looksAt('/etc/hosts')).toMatchObject({ text: '127.0.0.1 by hand\n', uid: THEIRS });
  });

  test('a kept copy lost from the state directory is never claimed handed back: said, and the file left as the host last wrote it', async () => {
    await theirs('/etc/app.conf', 'the machine\'s own\n', 0o640);
    const mine = { shape: 'file', path: '/etc/app.conf', content: { text: 'the machine\'s own\n' }, mode: '0640', owner: `${THEIRS}`, group: `${THEIRS}` };
    await hold([mine]);
    await hold([{ ...mine, content: { text: 'declared\n' } }]);
    // Someone cleans the state directory by hand.
    await fs.rm(path.join(stateDir, ORIGINALS_DIR), { recursive: true, force: true });

    const undeclared = (await hold([])).get('file:/etc/app.conf');
    expect(undeclared).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/is no longer there, so nothing was put back: left as it is/) });
    expect(await looksAt('/etc/app.conf')).toMatchObject({ text: 'declared\n' });
    expect(JSON.parse(host('owned', '--json').stdout)).toMatchObject({ resources: [] });
    expect(briefing()).toBeNull();
    // Not held any more: the next pass has nothing to say about it.
    expect((await hold([])).size).toBe(0);
  });

  test('a host killed after putting the original back, before it forgot the copy, leaves the original in place on its next run', async () => {
    await theirs('/etc/app.conf', 'the machine\'s own\n', 0o640);
    const mine = { shape: 'file', path: '/etc/app.conf', content: { text: 'the machine\'s own\n' }, mode: '0640', owner: `${THEIRS}`, group: `${THEIRS}` };
    await hold([mine]);
    await hold([{ ...mine, content: { text: 'declared\n' } }]);
    // What such a host leaves: the original back on the machine, its copy gone (its record and
    // the briefing line still there), and the store still marking the key as being undone.
    const store = new HostStore(stateDir);
    const { state } = await store.load();
    const copy = state.owned.resources[0]?.original_kept_at as string;
    await fs.writeFile(path.join(root, 'etc/app.conf'), 'the machine\'s own\n');
    await fs.rm(copy);
    await store.save({ ...state, owned: { resources: [] }, applying: ['file:/etc/app.conf'] });

    expect((await hold([])).get('file:/etc/app.conf')).toMatchObject({ outcome: 'handed_back' });
    expect(await looksAt('/etc/app.conf')).toMatchObject({ text: 'the machine\'s own\n' });
    expect(briefing()).toBeNull();
    expect(await kept()).toEqual([]);
  });

  test('a hand-back cut short and then declared again is finished first: the machine\'s original is kept again, never written over', async () => {
    await theirs('/etc/app.conf', 'the machine\'s own\n', 0o640);
    const mine = { shape: 'file', path: '/etc/app.conf', content: { text: 'the machine\'s own\n' }, mode: '0640', owner: `${THEIRS}`, group: `${THEIRS}` };
    await hold([mine]);
    await hold([{ ...mine, content: { text: 'declared\n' } }]);
    const store = new HostStore(stateDir);
    const { state } = await store.load();
    const copy = state.owned.resources[0]?.original_kept_at as string;
    await fs.writeFile(path.join(root, 'etc/app.conf'), 'the machine\'s own\n');
    await fs.rm(copy);
    await store.save({ ...state, owned: { resources: [] }, applying: ['file:/etc/app.conf'] });

    // Declared again, with content of its own: adoption decides afresh, and the machine wins.
    const again = await hold([{ ...mine, content: { text: 'declared again\n' } }]);
    expect(again.get('file:/etc/app.conf')).toMatchObject({ outcome: 'kept' });
    expect(await looksAt('/etc/app.conf')).toMatchObject({ text: 'the machine\'s own\n' });
    expect(await fs.readFile(copy, 'utf8')).toBe('the machine\'s own\n');
  });
});

describe('releasing a node', () => {
  beforeAll(() => ready());

  /** Stores a declaration signed by the pinned controller, as the link would have. */
  async function declared(kind: 'full' | 'final', generation: number, resources: unknown[], controller: { public_key: string; secret_key: string }): Promise<void> {
    const store = new HostStore(stateDir);
    const loaded = await store.load().catch(() => ({ state: emptyHostState() }));
    const envelope = sealEnvelope({ node: 'runner', epoch: 1, generation, kind, issued_at: '2026-08-27T14:02:00Z', resources }, controller.secret_key);
    const state: HostState = {
      ...loaded.state,
      identity: loaded.state.identity ?? { node: 'runner', ...generateNodeIdentity() },
      pins: { broker_url: 'tls://127.0.0.1:4222', broker_fingerprint: '0'.repeat(64), controller_public_key: controller.public_key },
      last_declaration: { envelope, applied_generation: generation, digest: envelopeDigest(envelope) },
      highest_epoch: 1,
    };
    await store.save(state);
  }

  test('the final declaration hands back everything adopted, removes what the host made, and drops every line', async () => {
    const controller = generateSigningKeyPair();
    await theirs('/etc/app/app.conf', 'theirs\n', 0o640);
    await theirs('/etc/hosts', '127.0.0.1 by hand\n', 0o644);
    await fs.chmod(path.join(root, 'etc/app'), 0o750);
    const as = { owner: `${THEIRS}`, group: `${THEIRS}` };
    await declared('full', 1, [
      { shape: 'directory', path: '/etc/app', mode: '0750', owner: 'root', group: 'root' },
      { shape: 'file', path: '/etc/app/app.conf', content: { text: 'theirs\n' }, mode: '0640', ...as },
      { shape: 'file', path: '/etc/app/extra.conf', content: { text: 'the host\'s\n' } },
      { shape: 'file', path: '/etc/hosts', content: { text: 'mesh hosts\n' } },
    ], controller);
    const first = host('reconcile', '--json');
    expect(first.stderr).toBe('');
    expect(briefing()?.lines.map((line) => [line.subject, line.status])).toEqual([
      ['directory:/etc/app', 'ok'], ['file:/etc/app/app.conf', 'ok'], ['file:/etc/hosts', 'kept'],
    ]);
    await declared('full', 2, [
      { shape: 'directory', path: '/etc/app', mode: '0755' },
      { shape: 'file', path: '/etc/app/app.conf', content: { text: 'mesh\n' } },
      { shape: 'file', path: '/etc/app/extra.conf', content: { text: 'the host\'s\n' } },
    ], controller);
    expect(host('reconcile').status).toBe(0);

    await declared('final', 3, [], controller);
    const released = host('reconcile', '--json');
    const results = new Map((JSON.parse(released.stdout) as { results: ResourceResult[] }).results.map((r) => [r.key, r.outcome]));
    expect(Object.fromEntries(results)).toEqual({
      'file:/etc/app/app.conf': 'handed_back',
      'file:/etc/app/extra.conf': 'removed',
      'directory:/etc/app': 'handed_back',
    });
    expect(await looksAt('/etc/app/app.conf')).toEqual({ text: 'theirs\n', mode: '640', uid: THEIRS, gid: THEIRS, mtime: THEN.toISOString() });
    await expect(fs.stat(path.join(root, 'etc/app/extra.conf'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await looksAt('/etc/app')).toEqual({ mode: '750', uid: 0, gid: 0 });
    expect(await looksAt('/etc/hosts')).toMatchObject({ text: '127.0.0.1 by hand\n' });
    expect(briefing()).toBeNull();
    expect(await kept()).toEqual([]);
    const { state } = await new HostStore(stateDir).load();
    expect({ owned: state.owned.resources, applying: state.applying }).toEqual({ owned: [], applying: [] });
  });
});
