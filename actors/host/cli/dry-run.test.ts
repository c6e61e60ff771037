import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { envelopeDigest, generateNodeIdentity, generateSigningKeyPair, ready, sealEnvelope } from '../../shared/crypto';
import { HostStore } from '../store/host-store';

// --dry-run on apply and reconcile, as a person runs it: bin/nox-mesh-host in a real process on
// a temporary folder standing in for the machine. It says what would change, and the machine
// and the store are the same, byte for byte, afterwards.

const repo = path.resolve(__dirname, '..', '..', '..');
let root: string;
let files: string;

function host(...args: string[]) {
  const run = spawnSync(process.execPath, [path.join(repo, 'bin', 'nox-mesh-host'), ...args, '--root', root], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

async function declaration(resources: unknown[]): Promise<string> {
  const file = path.join(files, `declaration-${Math.random().toString(36).slice(2)}.json`);
  await fs.writeFile(file, JSON.stringify({ resources }));
  return file;
}

/** Every entry under `dir`: its path, kind, mode, and the digest of a file's bytes or a link's target. */
async function snapshot(dir: string): Promise<string[]> {
  const seen: string[] = [];
  async function walk(at: string): Promise<void> {
    for (const entry of (await fs.readdir(at, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(at, entry.name);
      const stats = await fs.lstat(full);
      const mode = (stats.mode & 0o7777).toString(8);
      if (entry.isDirectory()) { seen.push(`d ${path.relative(dir, full)} ${mode}`); await walk(full); }
      else if (entry.isSymbolicLink()) seen.push(`l ${path.relative(dir, full)} ${await fs.readlink(full)}`);
      else seen.push(`f ${path.relative(dir, full)} ${mode} ${createHash('sha256').update(await fs.readFile(full)).digest('hex')}`);
    }
  }
  await walk(dir);
  return seen;
}

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'dry-run-'));
  files = await fs.mkdtemp(path.join(os.tmpdir(), 'dry-run-files-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(files, { recursive: true, force: true });
});

describe('--dry-run', () => {
  test('apply --dry-run on a fresh machine says what would change and creates nothing, not even the store', async () => {
    const marker = path.join(files, 'action-ran');
    const file = await declaration([
      { shape: 'file', path: '/etc/motd', content: { text: 'managed\n' } },
      { shape: 'action', name: 'stamp', argv: ['/bin/sh', '-c', `touch ${marker}`], guard: { unless: ['/bin/sh', '-c', `touch ${marker}-guard; false`] } },
    ]);
    const result = host('apply', file, '--dry-run');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^would apply\s+file:\/etc\/motd\s+no file at \/etc\/motd/m);
    expect(result.stdout).toMatch(/^would run\s+action:stamp/m);
    expect(result.stdout).toMatch(/dry run: nothing was changed/);
    expect(await fs.readdir(root)).toEqual([]);
    // Neither the action nor its guard ran.
    await expect(fs.stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fs.stat(`${marker}-guard`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('reconcile --dry-run on a machine in use changes no byte of the root or the store', async () => {
    expect(host('apply', await declaration([
      { shape: 'file', path: '/etc/motd', content: { text: 'managed\n' } },
      { shape: 'file', path: '/etc/gone', content: { text: 'held, then not\n' } },
      { shape: 'directory', path: '/srv/data' },
    ])).status).toBe(0);
    expect(host('apply', await declaration([{ shape: 'file', path: '/etc/motd', content: { text: 'managed\n' } }, { shape: 'directory', path: '/srv/data' }]), '--replace', '--dry-run').status).toBe(0);
    await fs.writeFile(path.join(root, 'etc/motd'), 'edited by hand\n');
    await fs.chmod(path.join(root, 'srv/data'), 0o700);
    const before = await snapshot(root);

    const result = host('reconcile', '--dry-run', '--json');
    expect(result.status).toBe(0);
    const plan = JSON.parse(result.stdout) as { dry_run: boolean; results: Array<{ key: string; change: string }> };
    expect(plan.dry_run).toBe(true);
    expect(plan.results).toEqual(expect.arrayContaining([
      expect.objectContaining({ key: 'file:/etc/motd', change: 'apply' }),
      expect.objectContaining({ key: 'directory:/srv/data', change: 'apply' }),
      expect.objectContaining({ key: 'file:/etc/gone', change: 'none' }),
    ]));
    expect(await snapshot(root)).toEqual(before);
  });

  test('apply --replace --dry-run shows what would be removed, and removes nothing', async () => {
    expect(host('apply', await declaration([{ shape: 'file', path: '/etc/a', content: { text: 'a' } }])).status).toBe(0);
    const before = await snapshot(root);
    const result = host('apply', await declaration([{ shape: 'file', path: '/etc/b', content: { text: 'b' } }]), '--replace', '--dry-run');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^would remove\s+file:\/etc\/a/m);
    expect(result.stdout).toMatch(/^would apply\s+file:\/etc\/b/m);
    expect(await snapshot(root)).toEqual(before);
  });

  test('exits 1 when what it looks at would be refused or cannot be read, still changing nothing', async () => {
    await fs.mkdir(path.join(root, 'etc'));
    await fs.symlink(files, path.join(root, 'etc/out'));
    const before = await snapshot(root);
    const result = host('apply', await declaration([{ shape: 'file', path: '/etc/out/x', content: { text: 'x' } }]), '--dry-run');
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^unreadable\s+file:\/etc\/out\/x\s+.*leads outside the root/m);
    expect(await snapshot(root)).toEqual(before);
  });

  test('a declaration naming the host\'s own unit is refused whole in a dry run too', async () => {
    const result = host('apply', await declaration([{ shape: 'file', path: '/etc/systemd/system/nox-mesh-host.service', content: { text: 'x' } }]), '--dry-run', '--json');
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { condition: 'DeclarationRefused' } });
    expect(await fs.readdir(root)).toEqual([]);
  });
});

describe('--dry-run on a node', () => {
  beforeAll(() => ready());

  async function enrolledWith(resources: unknown[], signer: { secret_key: string }, controller: { public_key: string }): Promise<void> {
    const payload = { node: 'runner', epoch: 1, generation: 1, kind: 'full', issued_at: '2026-08-27T14:02:00Z', resources };
    const envelope = sealEnvelope(payload, signer.secret_key);
    await new HostStore(path.join(root, 'var/lib/mesh-host')).save({
      ...emptyHostState(),
      identity: { node: 'runner', ...generateNodeIdentity() },
      pins: { broker_url: 'tls://127.0.0.1:4222', broker_fingerprint: '0'.repeat(64), controller_public_key: controller.public_key },
      last_declaration: { envelope, applied_generation: 1, digest: envelopeDigest(envelope) },
      highest_epoch: 1,
      sequence: 1,
    });
  }

  test('plans the stored declaration, verified against the pinned key, and changes nothing', async () => {
    const controller = generateSigningKeyPair();
    await enrolledWith([{ shape: 'file', path: '/etc/motd', content: { text: 'declared\n' } }], controller, controller);
    const before = await snapshot(root);
    const result = host('reconcile', '--dry-run');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^would apply\s+file:\/etc\/motd/m);
    expect(await snapshot(root)).toEqual(before);
  });

  test('refuses a stored declaration the pinned controller did not sign', async () => {
    await enrolledWith([{ shape: 'file', path: '/etc/motd', content: { text: 'forged\n' } }], generateSigningKeyPair(), generateSigningKeyPair());
    const result = host('reconcile', '--dry-run', '--json');
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { condition: 'ForeignSigner' } });
  });
});
