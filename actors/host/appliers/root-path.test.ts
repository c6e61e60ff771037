import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplyFailed } from './applier';
import { hostOwnPath, PathEscapesRoot, resolveUnderRoot, resolveUnderRootSync } from './root-path';

let root: string;
let outside: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-root-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'mesh-outside-')));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('resolveUnderRoot', () => {
  test('places a declared path under the root', async () => {
    await mkdir(join(root, 'etc'));
    expect(await resolveUnderRoot(root, '/etc/motd')).toBe(join(root, 'etc/motd'));
  });

  test('keeps directories that do not exist yet as written, for the caller to create', async () => {
    expect(await resolveUnderRoot(root, '/srv/app/conf.d/a.conf')).toBe(join(root, 'srv/app/conf.d/a.conf'));
  });

  test('follows a symbolic link that stays inside the root', async () => {
    await mkdir(join(root, 'run'));
    await mkdir(join(root, 'var'));
    await symlink('../run', join(root, 'var/run'));
    expect(await resolveUnderRoot(root, '/var/run/app.pid')).toBe(join(root, 'run/app.pid'));
  });

  test('refuses a symbolic link that leads outside the root, naming the link and where it leads', async () => {
    await symlink(outside, join(root, 'etc'));
    const refusal = resolveUnderRoot(root, '/etc/passwd');
    await expect(refusal).rejects.toBeInstanceOf(PathEscapesRoot);
    await expect(refusal).rejects.toThrow(`${join(root, 'etc')} is a symbolic link to ${outside}`);
  });

  test('refuses a relative link that climbs out of the root', async () => {
    await mkdir(join(root, 'srv'));
    await symlink('../../../../../../tmp', join(root, 'srv/data'));
    await expect(resolveUnderRoot(root, '/srv/data/x')).rejects.toBeInstanceOf(PathEscapesRoot);
  });

  test('refuses a dangling link that would lead outside the root', async () => {
    await symlink(join(outside, 'not-yet'), join(root, 'opt'));
    await expect(resolveUnderRoot(root, '/opt/tool/bin')).rejects.toBeInstanceOf(PathEscapesRoot);
  });

  test('does not follow the last component, which the applier inspects itself', async () => {
    await mkdir(join(root, 'etc'));
    await symlink(join(outside, 'motd'), join(root, 'etc/motd'));
    expect(await resolveUnderRoot(root, '/etc/motd')).toBe(join(root, 'etc/motd'));
  });

  test('refuses a regular file where a directory is needed', async () => {
    await writeFile(join(root, 'etc'), 'not a directory');
    await expect(resolveUnderRoot(root, '/etc/motd')).rejects.toThrow('/etc is not a directory, so /etc/motd cannot be made under it');
  });

  test('refuses a path that climbs with ".."', async () => {
    await expect(resolveUnderRoot(root, '/etc/../../x')).rejects.toBeInstanceOf(ApplyFailed);
  });

  test('leaves paths alone on the real machine', async () => {
    expect(await resolveUnderRoot('/', '/etc/hostname')).toBe('/etc/hostname');
  });
});

describe('hostOwnPath', () => {
  const ctx = { root: '/', stateDir: '/var/lib/mesh-host', hostUnit: 'nox-mesh-host.service' };

  test('refuses the state directory and anything in it', () => {
    expect(hostOwnPath('/var/lib/mesh-host/state.json', ctx)).toMatch(/state directory/);
    expect(hostOwnPath('/var/lib/mesh-host', ctx)).toMatch(/state directory/);
  });

  test('refuses the host unit and its drop-ins, and the OpenRC script', () => {
    expect(hostOwnPath('/etc/systemd/system/nox-mesh-host.service', ctx)).toMatch(/how the host itself runs/);
    expect(hostOwnPath('/etc/systemd/system/nox-mesh-host.service.d/override.conf', ctx)).toMatch(/how the host itself runs/);
    expect(hostOwnPath('/etc/init.d/nox-mesh-host', ctx)).toMatch(/how the host itself runs/);
  });

  test('allows a neighbour of the state directory and other units', () => {
    expect(hostOwnPath('/var/lib/mesh-host-backup/x', ctx)).toBeUndefined();
    expect(hostOwnPath('/etc/systemd/system/nginx.service', ctx)).toBeUndefined();
  });

  test('compares the state directory with the path as it lands under the root', () => {
    const rooted = { root: '/tmp/r', stateDir: '/tmp/r/var/lib/mesh-host', hostUnit: 'nox-mesh-host' };
    expect(hostOwnPath('/var/lib/mesh-host/state.json', rooted)).toMatch(/state directory/);
    expect(hostOwnPath('/var/lib/other', rooted)).toBeUndefined();
  });
});

describe('resolveUnderRoot with a pass\'s memo', () => {
  test('walks the directories above a path once, and keeps a directory that is missing out of the memo', async () => {
    const directories = new Map<string, string>();
    await mkdir(join(root, 'etc/app'), { recursive: true });
    expect(resolveUnderRootSync(root, '/etc/app/a.conf', directories)).toBe(join(root, 'etc/app/a.conf'));
    expect([...directories.values()]).toEqual([join(root, 'etc/app')]);

    // Remembered: a link put in its place afterwards is not walked again within the same pass.
    await rm(join(root, 'etc/app'), { recursive: true });
    await symlink(outside, join(root, 'etc/app'));
    expect(resolveUnderRootSync(root, '/etc/app/b.conf', directories)).toBe(join(root, 'etc/app/b.conf'));
    // Without the memo, the next pass sees the link and refuses it.
    expect(() => resolveUnderRootSync(root, '/etc/app/b.conf')).toThrow(PathEscapesRoot);

    expect(resolveUnderRootSync(root, '/srv/new/c.conf', directories)).toBe(join(root, 'srv/new/c.conf'));
    expect(directories.size).toBe(1);
  });
});
