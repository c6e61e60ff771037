import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { envelopeDigest, generateNodeIdentity, generateSigningKeyPair, ready, sealEnvelope } from '../../shared/crypto';
import { HostStore } from '../store/host-store';

// The host's verbs as a person runs them: bin/nox-mesh-host in a real process, against a
// temporary folder standing in for the machine (--root).

const repo = path.resolve(__dirname, '..', '..', '..');
let root: string;

function host(...args: string[]) {
  const run = spawnSync(process.execPath, [path.join(repo, 'bin', 'nox-mesh-host'), ...args, '--root', root], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

async function declaration(name: string, resources: unknown[]): Promise<string> {
  const file = path.join(root, '..', `${path.basename(root)}-${name}.json`);
  await fs.writeFile(file, JSON.stringify({ resources }));
  return file;
}

beforeEach(async () => { root = await fs.mkdtemp(path.join(os.tmpdir(), 'host-verbs-')); });
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
  for (const name of await fs.readdir(path.dirname(root))) {
    if (name.startsWith(`${path.basename(root)}-`)) await fs.rm(path.join(path.dirname(root), name), { force: true });
  }
});

describe('nox-mesh-host apply, owned, reconcile', () => {
  test('applies the README example into a sandbox and lists what it owns', async () => {
    const applied = host('apply', path.join(repo, 'examples', 'motd.json'));
    expect(applied.status).toBe(0);
    expect(applied.stdout).toMatch(/^applied\s+file:\/etc\/motd\.d\/10-mesh/m);
    expect(await fs.readFile(path.join(root, 'etc/motd.d/10-mesh'), 'utf8')).toBe('This machine is managed by Novox Mesh.\n');
    const owned = JSON.parse(host('owned', '--json').stdout) as { resources: Array<{ key: string }> };
    expect(owned.resources.map((r) => r.key).sort()).toEqual([
      'action:stamp-first-apply', 'directory:/etc/motd.d', 'file:/etc/issue.net', 'file:/etc/motd.d/10-mesh',
    ]);
  });

  test('reconcile puts back a managed file edited by hand, and says so', async () => {
    const file = await declaration('a', [{ shape: 'file', path: '/etc/motd', content: { text: 'managed\n' } }]);
    expect(host('apply', file).status).toBe(0);
    await fs.writeFile(path.join(root, 'etc/motd'), 'edited\n');
    const again = host('reconcile');
    expect(again.stdout).toMatch(/^applied\s+file:\/etc\/motd\s+content differs/m);
    expect(await fs.readFile(path.join(root, 'etc/motd'), 'utf8')).toBe('managed\n');
  });

  test('apply --replace removes what earlier hand applies held and this file does not name', async () => {
    expect(host('apply', await declaration('a', [{ shape: 'file', path: '/etc/a', content: { text: 'a' } }])).status).toBe(0);
    const replaced = host('apply', await declaration('b', [{ shape: 'file', path: '/etc/b', content: { text: 'b' } }]), '--replace');
    expect(replaced.stdout).toMatch(/^removed\s+file:\/etc\/a/m);
    await expect(fs.stat(path.join(root, 'etc/a'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a declaration that breaks the contract is refused whole, naming the field, and nothing is applied', async () => {
    const file = await declaration('bad', [
      { shape: 'file', path: '/etc/fine', content: { text: 'x' } },
      { shape: 'file', path: '/etc/bad', content: { text: 'x' }, mode: '644' },
    ]);
    const result = host('apply', file);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^error: declaration\.resources\[1\]\.mode: expected an octal mode like "0644"/);
    expect(result.stderr).toMatch(/next: {2}fix that field in .* nothing was applied/);
    await expect(fs.stat(path.join(root, 'etc/fine'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a file that is not JSON says so and how to fix it', async () => {
    const file = path.join(root, '..', `${path.basename(root)}-broken.json`);
    await fs.writeFile(file, '{"resources": [');
    const result = host('apply', file, '--json');
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { condition: 'DeclarationFileUnreadable', next: expect.stringMatching(/nothing was applied/) } });
  });

  test('a resource that fails makes the verb exit non-zero, and the rest still apply', async () => {
    const file = await declaration('mixed', [
      { shape: 'file', path: '/etc/ok', content: { text: 'ok' } },
      { shape: 'file', path: '/etc/owned-by-nobody', content: { text: 'x' }, owner: 'nosuchuser' },
    ]);
    const result = host('apply', file);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^failed\s+file:\/etc\/owned-by-nobody\s+.*nosuchuser/m);
    expect(await fs.readFile(path.join(root, 'etc/ok'), 'utf8')).toBe('ok');
  });

  test('briefing shows adoption: the machine\'s own file is kept and the outcome derived', async () => {
    await fs.mkdir(path.join(root, 'etc'), { recursive: true });
    await fs.writeFile(path.join(root, 'etc/hosts'), '127.0.0.1 localhost\n', { mode: 0o644 });
    const result = host('apply', await declaration('adopt', [{ shape: 'file', path: '/etc/hosts', content: { text: 'mesh hosts\n' } }]));
    expect(result.stdout).toMatch(/^kept\s+file:\/etc\/hosts/m);
    expect(await fs.readFile(path.join(root, 'etc/hosts'), 'utf8')).toBe('127.0.0.1 localhost\n');
    const briefing = host('briefing');
    expect(briefing.stdout).toMatch(/^outcome\s+kept$/m);
    expect(briefing.stdout).toMatch(/kept\s+file:\/etc\/hosts/);
    expect(JSON.parse(host('briefing', '--json').stdout)).toMatchObject({ outcome: 'kept' });
  });

  test('a corrupt store is reported and recovered from its last-good copy', async () => {
    expect(host('apply', await declaration('a', [{ shape: 'file', path: '/etc/a', content: { text: 'a' } }])).status).toBe(0);
    await fs.writeFile(path.join(root, 'var/lib/mesh-host/state.json'), '{"format": 1, "iden');
    const owned = host('owned');
    expect(owned.stderr).toMatch(/^warning: .*state\.json is unreadable.*recovered from .*state\.last-good\.json/);
    expect(owned.stdout).toMatch(/file:\/etc\/a/);
  });
});

describe('nox-mesh-host apply and reconcile on a node', () => {
  beforeAll(() => ready());

  /** Writes the store of node `runner` holding a full declaration of `resources` signed by `signer`, pinned to `controller`. */
  async function enrolledWith(resources: unknown[], controller: { public_key: string }, signer: { secret_key: string }): Promise<void> {
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

  // Regression: on a machine holding a controller's declaration both verbs stopped with
  // SodiumNotReady, because the stored declaration is verified before every pass and nothing had
  // loaded libsodium.
  test('verify the stored declaration and apply it beside what is applied by hand', async () => {
    const controller = generateSigningKeyPair();
    await enrolledWith([{ shape: 'file', path: '/etc/motd', content: { text: 'declared\n' } }], controller, controller);

    const reconciled = host('reconcile');
    expect(reconciled.stderr).toBe('');
    expect(reconciled.stdout).toMatch(/^applied\s+file:\/etc\/motd/m);
    const applied = host('apply', await declaration('by-hand', [{ shape: 'file', path: '/etc/issue', content: { text: 'by hand\n' } }]));
    expect(applied.stdout).toMatch(/^applied\s+file:\/etc\/issue/m);
    expect(applied.stdout).toMatch(/^unchanged\s+file:\/etc\/motd/m);
    expect(await fs.readFile(path.join(root, 'etc/motd'), 'utf8')).toBe('declared\n');
  });

  test('refuse a stored declaration the pinned controller did not sign, and apply nothing', async () => {
    await enrolledWith([{ shape: 'file', path: '/etc/motd', content: { text: 'forged\n' } }], generateSigningKeyPair(), generateSigningKeyPair());

    const reconciled = host('reconcile', '--json');
    expect(reconciled.status).not.toBe(0);
    expect(JSON.parse(reconciled.stdout)).toMatchObject({ error: { condition: 'ForeignSigner' } });
    await expect(fs.stat(path.join(root, 'etc/motd'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
