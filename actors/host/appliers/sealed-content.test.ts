import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { Resource, resourceKey, type FileResource } from '../../../schema/resource';
import { generateNodeIdentity } from '../../shared/crypto/nkey';
import { sealToNode } from '../../shared/crypto/seal';
import { ready } from '../../shared/crypto/sodium';
import { ProcessRunner } from '../../shared/process/command-runner';
import { converge, type Adopter, type ConvergeDeps } from '../reconcile/converge';
import { HostStore } from '../store/host-store';
import { StateHandle } from '../store/state-handle';
import type { ApplyContext } from './applier';
import { fileApplier } from './file.applier';
import { sealedOpener } from './sealed-content';

// A secret sealed to this node, written by a real converge pass into a temporary root with the
// real file applier and host store, then looked for everywhere the host writes or says things.

const VALUE = 'hunter2-Zq8v1-not-in-any-log';
const node = generateNodeIdentity();
const other = generateNodeIdentity();

// Takes over whatever is there: adoption has its own tests.
const takeAll: Adopter = {
  async adopt(resource) {
    return { take: true, line: { status: 'ok', subject: resourceKey(resource), detail: 'taken' } };
  },
};

let root: string;
let stateDir: string;
let deps: ConvergeDeps;

function sealedFile(box: string, overrides: Partial<FileResource> = {}): Resource {
  return Resource.parse({
    shape: 'file',
    path: '/etc/app/db-password',
    content: { sealed: { secret: 'app/db-password', version: 1, box } },
    owner: 'app',
    group: 'app',
    mode: '0640',
    ...overrides,
  });
}

beforeAll(async () => {
  await ready();
});

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'sealed-root-')));
  stateDir = path.join(root, 'var/lib/mesh-host');
  await fs.mkdir(path.join(root, 'etc/app'), { recursive: true });
  await fs.writeFile(path.join(root, 'etc/passwd'), 'root:x:0:0::/root:/bin/sh\napp:x:1234:1234::/srv/app:/bin/sh\n');
  await fs.writeFile(path.join(root, 'etc/group'), 'root:x:0:\napp:x:2345:\n');
  const ctx: ApplyContext = { root, stateDir, runner: new ProcessRunner(), hostUnit: 'nox-mesh-host', openSealed: sealedOpener(() => node.secret_key) };
  deps = {
    state: new StateHandle(new HostStore(stateDir), emptyHostState()),
    appliers: { file: fileApplier },
    ctx,
    adopter: takeAll,
    now: () => new Date('2026-12-01T00:00:00Z'),
    nodeName: () => 'test-node',
  };
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** Every file under `dir` whose bytes hold `needle`. */
async function filesHolding(dir: string, needle: string, skip: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() || full === skip) continue;
    if ((await fs.readFile(full)).includes(needle)) found.push(full);
  }
  return found;
}

describe('a file whose content is a secret sealed to this node', () => {
  test('is written with the declared owner, group and mode, and its value is nowhere else', async () => {
    const results = await converge([sealedFile(sealToNode(VALUE, node.public_key))], { removeUndeclared: true }, deps);
    expect(results.map((result) => result.outcome)).toEqual(['applied']);
    const real = path.join(root, 'etc/app/db-password');
    expect(await fs.readFile(real, 'utf8')).toBe(VALUE);
    const written = await fs.stat(real);
    expect([written.uid, written.gid, written.mode & 0o7777]).toEqual([1234, 2345, 0o640]);

    // No other file under the root (the host's store included), and nothing said, holds it.
    expect(await fs.readFile(path.join(stateDir, 'state.json'), 'utf8')).toContain('file:/etc/app/db-password');
    expect(await filesHolding(root, VALUE, real)).toEqual([]);
    expect(JSON.stringify(results)).not.toContain(VALUE);
    expect(JSON.stringify(deps.state.current())).not.toContain(VALUE);
  });

  test('is unchanged on the next pass, and put back when edited, by opening the box in memory', async () => {
    const resource = sealedFile(sealToNode(VALUE, node.public_key));
    await converge([resource], { removeUndeclared: true }, deps);
    expect((await converge([resource], { removeUndeclared: true }, deps)).map((result) => result.outcome)).toEqual(['unchanged']);
    await fs.writeFile(path.join(root, 'etc/app/db-password'), 'guessed');
    expect((await converge([resource], { removeUndeclared: true }, deps)).map((result) => result.outcome)).toEqual(['applied']);
    expect(await fs.readFile(path.join(root, 'etc/app/db-password'), 'utf8')).toBe(VALUE);
  });

  test('a box altered on the way is refused whole, nothing written, with the next step', async () => {
    const box = Buffer.from(sealToNode(VALUE, node.public_key), 'base64');
    box[box.length - 1] = (box[box.length - 1] ?? 0) ^ 1;
    const [result] = await converge([sealedFile(box.toString('base64'))], { removeUndeclared: true }, deps);
    expect(result?.outcome).toBe('failed');
    expect(result?.detail).toMatch(/app\/db-password \(version 1\).*does not open with its key.*next: .*re-enrol/);
    await expect(fs.stat(path.join(root, 'etc/app/db-password'))).rejects.toThrow(/ENOENT/);
    expect(deps.state.current().owned.resources).toEqual([]);
  });

  test('a box sealed to another node is refused, and the file the host wrote is left as it was', async () => {
    await converge([sealedFile(sealToNode(VALUE, node.public_key))], { removeUndeclared: true }, deps);
    const [result] = await converge([sealedFile(sealToNode('the other node\'s value', other.public_key))], { removeUndeclared: true }, deps);
    expect(result?.outcome).toBe('failed');
    expect(result?.detail).toMatch(/sealed to another key, or altered/);
    expect(await fs.readFile(path.join(root, 'etc/app/db-password'), 'utf8')).toBe(VALUE);
  });

  test('a host that is not enrolled has no key, and says how to get one', async () => {
    const { openSealed: _none, ...unenrolled } = deps.ctx;
    const [result] = await converge([sealedFile(sealToNode(VALUE, node.public_key))], { removeUndeclared: true }, { ...deps, ctx: unenrolled });
    expect(result?.outcome).toBe('failed');
    expect(result?.detail).toMatch(/not enrolled.*nox-mesh-host enrol/);
  });

  test('a secret the controller never resolved is refused, naming the module route', async () => {
    const unresolved = Resource.parse({ shape: 'file', path: '/etc/app/token', content: { secret: 'token' }, owner: 'app', mode: '0600' });
    const [result] = await converge([unresolved], { removeUndeclared: true }, deps);
    expect(result?.outcome).toBe('refused');
    expect(result?.detail).toMatch(/only the controller can seal.*mesh-control module add/);
  });
});
