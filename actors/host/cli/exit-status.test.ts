import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// What apply and reconcile exit with, as a script sees it: bin/nox-mesh-host in a real process,
// with pipes, on a temporary folder standing in for the machine (--root). 0 only when the
// machine matches; 1 whenever something failed, was refused or could not be kept.

const repo = path.resolve(__dirname, '..', '..', '..');
let root: string;
let outside: string;

function host(...args: string[]) {
  const run = spawnSync(process.execPath, [path.join(repo, 'bin', 'nox-mesh-host'), ...args, '--root', root], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

async function declaration(resources: unknown[]): Promise<string> {
  const file = path.join(outside, `declaration-${Math.random().toString(36).slice(2)}.json`);
  await fs.writeFile(file, JSON.stringify({ resources }));
  return file;
}

async function held(): Promise<string[]> {
  const state = JSON.parse(await fs.readFile(path.join(root, 'var/lib/mesh-host/state.json'), 'utf8')) as { local_resources: Array<{ path?: string; name?: string; shape: string }> };
  return state.local_resources.map((resource) => `${resource.shape}:${resource.path ?? resource.name}`);
}

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'exit-status-'));
  outside = await fs.mkdtemp(path.join(os.tmpdir(), 'exit-status-outside-'));
  await fs.mkdir(path.join(root, 'etc'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

describe('apply and reconcile exit 1 when the machine was not made to match', () => {
  test('a path that leads out of the root through a link exits 1, writes nothing outside, and is not held', async () => {
    await fs.symlink(outside, path.join(root, 'etc/out'));
    const file = await declaration([
      { shape: 'file', path: '/etc/fine', content: { text: 'fine\n' } },
      { shape: 'file', path: '/etc/out/planted', content: { text: 'x' } },
    ]);
    const applied = host('apply', file);
    expect(applied.status).toBe(1);
    expect(applied.stdout).toMatch(/leads outside the root/);
    await expect(fs.stat(path.join(outside, 'planted'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await held()).toEqual(['file:/etc/fine']);
    // Not held, so not tried (and failed) again on every later pass.
    const again = host('reconcile');
    expect(again.status).toBe(0);
    expect(again.stdout).not.toMatch(/planted/);
  });

  test('a name too long for the file system exits 1 and is not held', async () => {
    const applied = host('apply', await declaration([{ shape: 'file', path: `/etc/${'n'.repeat(300)}`, content: { text: 'x' } }]));
    expect(applied.status).toBe(1);
    expect(await held()).toEqual([]);
    expect(host('reconcile').status).toBe(0);
  });

  test('an action whose guard cannot run exits 1, runs nothing and is not held', async () => {
    const marker = path.join(outside, 'ran');
    const applied = host('apply', await declaration([
      { shape: 'action', name: 'blind', argv: ['/bin/sh', '-c', `touch ${marker}`], guard: { unless: ['/nonexistent/guard'] } },
    ]));
    expect(applied.status).toBe(1);
    expect(applied.stdout).toMatch(/guard .* could not be asked/);
    await expect(fs.stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await held()).toEqual([]);
  });

  test('an original that cannot be kept exits 1, leaves the machine\'s file as it was, and is not held', async () => {
    await fs.writeFile(path.join(root, 'etc/hosts'), 'the machine\'s own\n');
    await fs.mkdir(path.join(root, 'var/lib/mesh-host'), { recursive: true });
    // A plain file where the folder of kept originals goes: nothing can be kept under it.
    await fs.writeFile(path.join(root, 'var/lib/mesh-host/originals'), 'in the way\n');
    const applied = host('apply', await declaration([{ shape: 'file', path: '/etc/hosts', content: { text: 'mesh\n' } }]));
    expect(applied.status).toBe(1);
    expect(applied.stdout).toMatch(/adoption could not keep or read file:\/etc\/hosts/);
    expect(await fs.readFile(path.join(root, 'etc/hosts'), 'utf8')).toBe('the machine\'s own\n');
    expect(await held()).toEqual([]);
    expect(JSON.parse(host('briefing', '--json').stdout)).toMatchObject({ outcome: 'failed' });
  });

  test('a resource that fails is not held, and what an earlier apply held for it stays', async () => {
    expect(host('apply', await declaration([{ shape: 'file', path: '/etc/motd', content: { text: 'first\n' } }])).status).toBe(0);
    const failed = host('apply', await declaration([{ shape: 'file', path: '/etc/motd', content: { text: 'second\n' }, owner: 'nosuchuser' }]));
    expect(failed.status).toBe(1);
    expect(failed.stdout).toMatch(/not held \(fix and apply again\): file:\/etc\/motd/);
    const state = JSON.parse(await fs.readFile(path.join(root, 'var/lib/mesh-host/state.json'), 'utf8')) as { local_resources: unknown[] };
    expect(state.local_resources).toEqual([expect.objectContaining({ path: '/etc/motd', content: { text: 'first\n' } })]);
    const again = host('reconcile');
    expect(again.status).toBe(0);
    expect(await fs.readFile(path.join(root, 'etc/motd'), 'utf8')).toBe('first\n');
  });

  test('a conflict adoption settled (the machine\'s value wins) is not a failure', async () => {
    await fs.writeFile(path.join(root, 'etc/hosts'), 'the machine\'s own\n');
    const applied = host('apply', await declaration([{ shape: 'file', path: '/etc/hosts', content: { text: 'mesh\n' } }]));
    expect(applied.stdout).toMatch(/^kept\s+file:\/etc\/hosts/m);
    expect(applied.status).toBe(0);
  });
});

describe('a declaration naming the host itself is refused whole', () => {
  const own = [
    { shape: 'file', path: '/etc/systemd/system/nox-mesh-host.service', content: { text: '[Service]\n' } },
    { shape: 'file', path: '/usr/lib/systemd/system/nox-mesh-host-resume.service', content: { text: '[Service]\n' } },
    { shape: 'file', path: '/etc/systemd/system/nox-mesh-host-resume.service.d/override.conf', content: { text: '[Service]\n' } },
    { shape: 'file', path: '/lib/elogind/system-sleep/nox-mesh-host', content: { text: '#!/bin/sh\n' } },
    { shape: 'file', path: '/usr/lib/nox-mesh-host/launch', content: { text: '#!/bin/sh\n' } },
    { shape: 'directory', path: '/etc/systemd/system/nox-mesh-host-launch.service.d' },
  ];

  test.each(own)('$path: nothing of the declaration is applied or held, and it exits 1', async (resource) => {
    const file = await declaration([{ shape: 'file', path: '/etc/fine', content: { text: 'fine\n' } }, resource]);
    const applied = host('apply', file);
    expect(applied.status).toBe(1);
    expect(applied.stderr).toMatch(/^error: the declaration is refused whole, and nothing of it was applied or held: .*how the host itself runs/);
    expect(applied.stdout).toBe('');
    await expect(fs.stat(path.join(root, 'etc/fine'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fs.stat(path.join(root, resource.path))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fs.stat(path.join(root, 'var/lib/mesh-host/state.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('the service of the resume unit is refused like the host\'s own', async () => {
    const applied = host('apply', await declaration([
      { shape: 'file', path: '/etc/fine', content: { text: 'fine\n' } },
      { shape: 'service', name: 'nox-mesh-host-resume.service', state: 'stopped', enabled: false },
    ]), '--json');
    expect(applied.status).toBe(1);
    expect(JSON.parse(applied.stdout)).toMatchObject({ error: { condition: 'DeclarationRefused' } });
    await expect(fs.stat(path.join(root, 'etc/fine'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
