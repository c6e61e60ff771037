import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import { Resource } from '../../../schema/resource';
import { vouchParsed } from '../../../schema/vouched';
import { HostStore } from './host-store';
import { CONTENT_DIR } from './content-store';
import { StoreCorrupt, StoreEvidenceWithoutState } from './store-errors';

let dir: string;
beforeEach(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'host-store-')); });
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

function stateOwning(...paths: string[]): HostState {
  return {
    ...emptyHostState(),
    sequence: paths.length,
    owned: {
      resources: paths.map((p) => ({ key: `file:${p}`, shape: 'file' as const, digest: 'a'.repeat(64), recorded_at: '2026-12-01T00:00:00.000Z' })),
    },
  };
}

describe('the host store', () => {
  test('a hand-applied file kept inline reaches the store\'s check as the object the declaration\'s parse gave', async () => {
    // Vouched for as parsed, with a mode the contract refuses: were the object copied on its way
    // (as the content store did with every file), the copy would be parsed and refused, and the
    // check of 1,000 just-parsed resources run twice.
    const resource = { shape: 'file', path: '/etc/motd', content: { text: 'hello\n' }, mode: 'rw-r--r--', owner: 'root', group: 'root' } as unknown as HostState['local_resources'][number];
    vouchParsed(Resource, [resource]);
    await new HostStore(dir).save({ ...emptyHostState(), local_resources: [resource] });
    expect(JSON.parse(await fs.readFile(path.join(dir, 'state.json'), 'utf8')).local_resources).toEqual([resource]);
  });

  test('a host with no store starts fresh, and says so', async () => {
    const loaded = await new HostStore(dir).load();
    expect(loaded.source).toBe('fresh');
    expect(loaded.state).toEqual(emptyHostState());
  });

  test('saves and loads the same state, readable only by its owner, leaving no temp files', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd', '/etc/issue'));
    expect((await store.load()).state).toEqual(stateOwning('/etc/motd', '/etc/issue'));
    expect((await fs.stat(store.file)).mode & 0o777).toBe(0o600);
    expect((await fs.readdir(dir)).sort()).toEqual(['state.json', 'state.last-good.json']);
  });

  test('a truncated state file is reported and recovered from the last-good copy', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    const text = await fs.readFile(store.file, 'utf8');
    await fs.writeFile(store.file, text.slice(0, Math.floor(text.length / 2)));
    const loaded = await store.load({ repair: true });
    expect(loaded.source).toBe('last-good');
    expect(loaded.problem).toMatch(/state\.json is unreadable: it is not complete JSON .* it may be truncated; recovered from .*state\.last-good\.json/);
    expect(loaded.state.owned.resources.map((r) => r.key)).toEqual(['file:/etc/motd']);
    // The damaged file is kept for a person to look at, and state.json is whole again.
    expect((await fs.readdir(dir)).some((name) => name.startsWith('state.json.damaged-'))).toBe(true);
    expect((await store.load()).source).toBe('state');
  });

  test('an empty (zero-length) state file is called truncated and recovered', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    await fs.writeFile(store.file, '');
    const loaded = await store.load();
    expect(loaded.problem).toMatch(/it is empty \(truncated\)/);
    expect(loaded.state.owned.resources).toHaveLength(1);
  });

  test('a corrupt state file (valid JSON, wrong contract) is reported by field and recovered', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    const json = JSON.parse(await fs.readFile(store.file, 'utf8'));
    json.owned.resources[0].digest = 'not-a-digest';
    await fs.writeFile(store.file, JSON.stringify(json));
    const loaded = await store.load();
    expect(loaded.source).toBe('last-good');
    expect(loaded.problem).toMatch(/host state\.owned\.resources\[0\]\.digest/);
  });

  test('when both copies are damaged the host refuses to start empty, and says what to do', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    await fs.writeFile(store.file, '{"format": 1, "identity"');
    await fs.writeFile(store.lastGoodFile, 'garbage');
    const failure = store.load();
    await expect(failure).rejects.toBeInstanceOf(StoreCorrupt);
    await expect(store.load()).rejects.toThrow(/state\.json is unreadable.*and .*state\.last-good\.json is unreadable/);
    await expect(store.load()).rejects.toMatchObject({ next: expect.stringMatching(/restore state\.json from a backup.*re-enrol/) });
    // Nothing was replaced: the damaged file is still there for a person.
    expect(await fs.readFile(store.file, 'utf8')).toBe('{"format": 1, "identity"');
  });

  test('a deleted state file with its copy present is recovered, not started over', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    await fs.rm(store.file);
    const loaded = await store.load();
    expect(loaded.source).toBe('last-good');
    expect(loaded.problem).toMatch(/state\.json is missing/);
  });

  test('writes the same bytes to the state file and its last-good copy on every save', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    await store.save(stateOwning('/etc/motd', '/etc/issue'));
    const text = await fs.readFile(store.file, 'utf8');
    expect(await fs.readFile(store.lastGoodFile, 'utf8')).toBe(text);
    expect(JSON.parse(text).owned.resources).toHaveLength(2);
  });

  test('a last-good copy left short or stale (its data is not synced: a power cut) is written again from state.json when the host opens the store', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd', '/etc/issue'));
    const text = await fs.readFile(store.file, 'utf8');
    await fs.writeFile(store.lastGoodFile, text.slice(0, 40));
    // A reader without the lock changes nothing.
    await new HostStore(dir).load();
    expect(await fs.readFile(store.lastGoodFile, 'utf8')).toBe(text.slice(0, 40));
    const loaded = await new HostStore(dir).load({ repair: true });
    expect(loaded.source).toBe('state');
    expect(await fs.readFile(store.lastGoodFile, 'utf8')).toBe(text);
    await fs.rm(store.lastGoodFile);
    await new HostStore(dir).load({ repair: true });
    expect(await fs.readFile(store.lastGoodFile, 'utf8')).toBe(text);
    expect((await fs.readdir(dir)).sort()).toEqual(['state.json', 'state.last-good.json']);
  });

  test('a save given `after` renames its state into place only once that has settled, and not at all when it fails', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    const before = await fs.readFile(store.file, 'utf8');
    let release: () => void = () => undefined;
    const synced = new Promise<void>((resolve) => {
      release = resolve;
    });
    const saving = store.save(stateOwning('/etc/motd', '/etc/issue'), { after: synced });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await fs.readFile(store.file, 'utf8')).toBe(before);
    release();
    await saving;
    expect(JSON.parse(await fs.readFile(store.file, 'utf8')).owned.resources).toHaveLength(2);

    const failed = Promise.reject(new Error('EIO syncing /etc'));
    failed.catch(() => undefined);
    const now = await fs.readFile(store.file, 'utf8');
    await expect(store.save(stateOwning('/etc/hosts'), { after: failed })).rejects.toThrow('EIO syncing /etc');
    expect(await fs.readFile(store.file, 'utf8')).toBe(now);
    expect((await fs.readdir(dir)).sort()).toEqual(['state.json', 'state.last-good.json']);
  });

  test('a state directory removed under a running store is made again by the next save', async () => {
    const stateDir = path.join(dir, 'var', 'lib', 'mesh-host');
    const store = new HostStore(stateDir);
    await store.save(stateOwning('/etc/motd'));
    await fs.rm(path.join(dir, 'var'), { recursive: true });
    await store.save(stateOwning('/etc/issue'));
    expect((await store.load()).state.owned.resources.map((r) => r.key)).toEqual(['file:/etc/issue']);
  });

  test('refuses to save a state that breaks its contract, leaving the store as it was', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    const bad = { ...stateOwning('/etc/motd'), sequence: -1 };
    await expect(store.save(bad)).rejects.toThrow(/host state\.sequence/);
    expect((await store.load()).state).toEqual(stateOwning('/etc/motd'));
  });
});

describe('the host store at its edges', () => {
  const handApplied = (text: string): HostState => ({
    ...stateOwning('/srv/big'),
    local_resources: [{ shape: 'file', path: '/srv/big', content: { text }, mode: '0644', owner: 'root', group: 'root' }],
  });

  test('keeps a large content once beside the store, not in state.json and its copy, and does not write it again on later saves', async () => {
    const store = new HostStore(dir);
    const big = 'x'.repeat(5 * 1024 * 1024);
    const state = handApplied(big);
    await store.save(state);
    expect((await fs.stat(store.file)).size).toBeLessThan(4096);
    expect((await fs.stat(store.lastGoodFile)).size).toBeLessThan(4096);
    const [kept, ...others] = await fs.readdir(path.join(dir, CONTENT_DIR));
    expect(others).toEqual([]);
    const before = await fs.stat(path.join(dir, CONTENT_DIR, kept as string));
    await store.save({ ...state, sequence: 2 });
    const after = await fs.stat(path.join(dir, CONTENT_DIR, kept as string));
    expect(after.ino).toBe(before.ino);
    const loaded = await new HostStore(dir).load();
    expect(loaded.state.local_resources[0]).toMatchObject({ content: { text: big } });
    expect(loaded.state.sequence).toBe(2);
  });

  test('a content no longer held is removed from beside the store', async () => {
    const store = new HostStore(dir);
    await store.save(handApplied('a'.repeat(10_000)));
    await store.save(handApplied('b'.repeat(10_000)));
    expect(await fs.readdir(path.join(dir, CONTENT_DIR))).toHaveLength(1);
    await store.save(stateOwning());
    expect(await fs.readdir(path.join(dir, CONTENT_DIR))).toEqual([]);
  });

  test('a stored content that was changed on disk is found out, and the store refuses to start from it', async () => {
    const store = new HostStore(dir);
    await store.save(handApplied('a'.repeat(10_000)));
    const [kept] = await fs.readdir(path.join(dir, CONTENT_DIR));
    await fs.writeFile(path.join(dir, CONTENT_DIR, kept as string), JSON.stringify({ text: 'planted' }));
    await expect(new HostStore(dir).load()).rejects.toThrow(/content\/[0-9a-f]{64}, which is damaged/);
  });

  test('with both state files gone but kept originals present, it refuses to start empty and names what it found', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    await fs.mkdir(path.join(dir, 'originals', 'file:%2Fetc%2Fmotd', 'etc'), { recursive: true });
    await fs.writeFile(path.join(dir, 'originals', 'file:%2Fetc%2Fmotd', 'etc', 'motd'), 'the machine\'s own\n');
    await fs.rm(store.file);
    await fs.rm(store.lastGoodFile);
    const failure = new HostStore(dir).load({ repair: true });
    await expect(failure).rejects.toBeInstanceOf(StoreEvidenceWithoutState);
    await expect(new HostStore(dir).load()).rejects.toThrow(/originals holds originals/);
    await expect(new HostStore(dir).load()).rejects.toMatchObject({ exitCode: 4, next: expect.stringMatching(/restore state\.json from a backup.*mv /) });
    await expect(fs.stat(store.file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('asked to rebuild (enrol), a store whose files are both gone opens empty and says what it found; nothing else does', async () => {
    await fs.mkdir(path.join(dir, 'launch'));
    await fs.writeFile(path.join(dir, 'launch', 'known-good'), '0.1.0\n');
    await expect(new HostStore(dir).load({ repair: true })).rejects.toBeInstanceOf(StoreEvidenceWithoutState);
    const loaded = await new HostStore(dir).load({ repair: true, rebuild: true });
    expect(loaded).toMatchObject({ source: 'fresh', state: emptyHostState(), problem: expect.stringMatching(/both gone.*enrolling rebuilds it/) });
  });

  test('a known-good version left by the launcher is evidence of earlier use too', async () => {
    await fs.mkdir(path.join(dir, 'launch'));
    await fs.writeFile(path.join(dir, 'launch', 'known-good'), '0.1.0\n');
    await expect(new HostStore(dir).load()).rejects.toThrow(/launch\/known-good records a version/);
  });

  test('a fresh state directory holding only the lock and the launcher\'s start counter is a new host', async () => {
    await fs.mkdir(path.join(dir, 'launch'));
    await fs.writeFile(path.join(dir, 'launch', 'attempts'), '1\n');
    await fs.writeFile(path.join(dir, 'host.lock'), `${process.pid}\n`);
    expect((await new HostStore(dir).load()).source).toBe('fresh');
  });

  test('a state.json that is a directory is recovered from the last-good copy and moved aside', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    await fs.rm(store.file);
    await fs.mkdir(store.file);
    const loaded = await store.load({ repair: true });
    expect(loaded.source).toBe('last-good');
    expect(loaded.problem).toMatch(/state\.json is unreadable: EISDIR.*recovered from .*state\.last-good\.json \(the damaged file is kept at .*state\.json\.damaged-/);
    expect(loaded.state.owned.resources.map((r) => r.key)).toEqual(['file:/etc/motd']);
    expect((await fs.stat(store.file)).isFile()).toBe(true);
    expect((await store.load()).source).toBe('state');
  });

  test('a reader without the lock recovers in memory and changes nothing on disk', async () => {
    const store = new HostStore(dir);
    await store.save(stateOwning('/etc/motd'));
    await fs.writeFile(store.file, '{"format": 1');
    const before = (await fs.readdir(dir)).sort();
    const loaded = await new HostStore(dir).load();
    expect(loaded.source).toBe('last-good');
    expect(await fs.readFile(store.file, 'utf8')).toBe('{"format": 1');
    expect((await fs.readdir(dir)).sort()).toEqual(before);
  });

  test('opening the store sweeps temporaries of killed saves and all but the newest damaged copies', async () => {
    const store = new HostStore(dir);
    await store.save(handApplied('c'.repeat(10_000)));
    const leftovers = ['.state.json.4242.k3j2h1.tmp', '.state.last-good.json.4242.a1b2c3.tmp'];
    for (const name of leftovers) await fs.writeFile(path.join(dir, name), '{"half": ');
    await fs.writeFile(path.join(dir, CONTENT_DIR, '.0123.4242.zz9.tmp'), 'half');
    await fs.writeFile(path.join(dir, CONTENT_DIR, 'f'.repeat(64)), '{"text": "orphan"}');
    const damaged = ['2026-01-01', '2026-02-01', '2026-03-01', '2026-04-01', '2026-05-01'].map((day) => `state.json.damaged-${day}T00-00-00-000Z`);
    for (const name of damaged) await fs.writeFile(path.join(dir, name), 'x');
    const loaded = await new HostStore(dir).load({ repair: true });
    expect(loaded.swept).toMatch(/removed 3 temporaries of interrupted saves, 2 damaged copies of state\.json older than the newest 3, 1 stored contents nothing refers to/);
    const names = await fs.readdir(dir);
    for (const name of leftovers) expect(names).not.toContain(name);
    expect(names.filter((name) => name.startsWith('state.json.damaged-')).sort()).toEqual(damaged.slice(2));
    expect(await fs.readdir(path.join(dir, CONTENT_DIR))).toHaveLength(1);
    expect(loaded.state.local_resources[0]).toMatchObject({ content: { text: 'c'.repeat(10_000) } });
  });
});
