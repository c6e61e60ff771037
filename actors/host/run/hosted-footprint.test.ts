import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadedByRunUntil, packagesAmong } from './testing/loaded-modules';

// `nox-mesh-host run` on a machine that is not a node yet, as the service starts it
// (bin/nox-mesh-host in a real process): what it loads while it waits to be enrolled. In the
// bundle what is never required is never evaluated, so what this process does not load is
// memory the hosted host does not hold (libsodium's WebAssembly alone is some 6 MB).

const repo = path.resolve(__dirname, '..', '..', '..');
let root: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'hosted-footprint-'));
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** Starts the host over `root`, waits until it says it is hosted, stops it, and returns what it loaded. */
function loadedWhileHosted(): Promise<{ said: string; files: string[] }> {
  return loadedByRunUntil(root, /^hosted: /m);
}

describe('a hosted host', () => {
  test('waits for enrolment without loading libsodium, the NATS client or the code of a node', async () => {
    const { said, files } = await loadedWhileHosted();

    expect(said).toMatch(/^hosted: this machine has no identity yet/m);
    expect(packagesAmong(files).filter((name) => /libsodium|tweetnacl|@nats-io/.test(name))).toEqual([]);
    const ofNode = files.filter((file) => /[\\/]actors[\\/](host[\\/](link|enrolment)|shared[\\/]crypto)[\\/]|host-tree|node-work|host-lifecycle/.test(file));
    expect(ofNode).toEqual([]);
  });

  test('does not load the store\'s contracts, the appliers or the profile probes either: it reads state.json as plain JSON until an identity appears', async () => {
    const { files } = await loadedWhileHosted();

    expect(packagesAmong(files).filter((name) => /^(zod|xstate)$/.test(name))).toEqual([]);
    // schema/operator-error.ts is the one exception: the error every CLI prints, a class that
    // imports nothing (it sits in schema/ because a control answer carries its JSON form).
    const ofStore = files.filter((file) => /[\\/](schema|actors[\\/]host[\\/](appliers|profile[\\/]detect-profile|host-context|store[\\/]host-store))[\\/.]/.test(file) && !/[\\/]schema[\\/]operator-error\.ts$/.test(file));
    expect(ofStore).toEqual([]);
  });

  test('still opens the store, and says what is wrong, when state.json is not plainly a store without an identity', async () => {
    const stateDir = path.join(root, 'var/lib/mesh-host');
    await fs.mkdir(stateDir, { recursive: true });
    await fs.writeFile(path.join(stateDir, 'state.json'), '{"format": 1, "identity": null');
    const host = spawn(process.execPath, [path.join(repo, 'bin', 'nox-mesh-host'), 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    host.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const code = await new Promise<number | null>((resolve) => host.once('exit', resolve));

    expect(code).not.toBe(0);
    expect(stderr).toMatch(/^error: the host store cannot be read: .*state\.json is unreadable: it is not complete JSON/m);
  });
});
