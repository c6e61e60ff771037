import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import { HostStore } from './host-store';
import { StoreCorrupt } from './store-errors';

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
    const loaded = await store.load();
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
