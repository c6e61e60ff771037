import { chown, lchown, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplyFailed } from './applier';
import { PassMemo } from './pass-memo';
import { hostOwnPath, PathEscapesRoot, PathInStateDirectory, resolveUnderRoot, resolveUnderRootSync, UnsafeLink } from './root-path';

let root: string;
let outside: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-root-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'mesh-outside-')));
});

// Where a path is resolved: the root, and the host's state directory in its usual place there.
function under(machine: string): { root: string; stateDir: string } {
  return { root: machine, stateDir: join(machine, 'var/lib/mesh-host') };
}

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('resolveUnderRoot', () => {
  test('places a declared path under the root', async () => {
    await mkdir(join(root, 'etc'));
    expect(await resolveUnderRoot(under(root), '/etc/motd')).toBe(join(root, 'etc/motd'));
  });

  test('keeps directories that do not exist yet as written, for the caller to create', async () => {
    expect(await resolveUnderRoot(under(root), '/srv/app/conf.d/a.conf')).toBe(join(root, 'srv/app/conf.d/a.conf'));
  });

  test('follows a symbolic link that stays inside the root', async () => {
    await mkdir(join(root, 'run'));
    await mkdir(join(root, 'var'));
    await symlink('../run', join(root, 'var/run'));
    expect(await resolveUnderRoot(under(root), '/var/run/app.pid')).toBe(join(root, 'run/app.pid'));
  });

  test('refuses a symbolic link that leads outside the root, naming the link and where it leads', async () => {
    await symlink(outside, join(root, 'etc'));
    const refusal = resolveUnderRoot(under(root), '/etc/passwd');
    await expect(refusal).rejects.toBeInstanceOf(PathEscapesRoot);
    await expect(refusal).rejects.toThrow(`${join(root, 'etc')} is a symbolic link to ${outside}`);
  });

  test('refuses a relative link that climbs out of the root', async () => {
    await mkdir(join(root, 'srv'));
    await symlink('../../../../../../tmp', join(root, 'srv/data'));
    await expect(resolveUnderRoot(under(root), '/srv/data/x')).rejects.toBeInstanceOf(PathEscapesRoot);
  });

  test('refuses a dangling link that would lead outside the root', async () => {
    await symlink(join(outside, 'not-yet'), join(root, 'opt'));
    await expect(resolveUnderRoot(under(root), '/opt/tool/bin')).rejects.toBeInstanceOf(PathEscapesRoot);
  });

  test('does not follow the last component, which the applier inspects itself', async () => {
    await mkdir(join(root, 'etc'));
    await symlink(join(outside, 'motd'), join(root, 'etc/motd'));
    expect(await resolveUnderRoot(under(root), '/etc/motd')).toBe(join(root, 'etc/motd'));
  });

  test('refuses a regular file where a directory is needed', async () => {
    await writeFile(join(root, 'etc'), 'not a directory');
    await expect(resolveUnderRoot(under(root), '/etc/motd')).rejects.toThrow('/etc is not a directory, so /etc/motd cannot be made under it');
  });

  test('refuses a path that climbs with ".."', async () => {
    await expect(resolveUnderRoot(under(root), '/etc/../../x')).rejects.toBeInstanceOf(ApplyFailed);
  });

  test('leaves paths alone on the real machine', async () => {
    expect(await resolveUnderRoot(under('/'), '/etc/hostname')).toBe('/etc/hostname');
  });
});

describe('resolveUnderRoot and the host\'s state directory', () => {
  beforeEach(async () => {
    await mkdir(join(root, 'var/lib/mesh-host/originals'), { recursive: true });
  });

  test('refuses a path through a link inside the root that leads into the state directory, naming the link', async () => {
    await symlink('var/lib/mesh-host', join(root, 'srv'));
    const refusal = resolveUnderRoot(under(root), '/srv/originals/file/etc/app.conf');
    await expect(refusal).rejects.toBeInstanceOf(PathInStateDirectory);
    await expect(refusal).rejects.toThrow(
      `/srv/originals/file/etc/app.conf leads into the host's state directory ${join(root, 'var/lib/mesh-host')}: ` +
        `${join(root, 'srv')} is a symbolic link to ${join(root, 'var/lib/mesh-host')}`,
    );
  });

  test('refuses the state directory itself and its store files by another name', async () => {
    await symlink('var/lib', join(root, 'data'));
    await expect(resolveUnderRoot(under(root), '/data/mesh-host')).rejects.toBeInstanceOf(PathInStateDirectory);
    await expect(resolveUnderRoot(under(root), '/data/mesh-host/state.json')).rejects.toBeInstanceOf(PathInStateDirectory);
    // Its neighbours are the machine's.
    expect(await resolveUnderRoot(under(root), '/data/mesh-host-old/x')).toBe(join(root, 'var/lib/mesh-host-old/x'));
    expect(await resolveUnderRoot(under(root), '/data/other.conf')).toBe(join(root, 'var/lib/other.conf'));
  });

  test('refuses it when the pass has already remembered the directory on the way', async () => {
    await symlink('var/lib/mesh-host', join(root, 'srv'));
    const at = { ...under(root), pass: new PassMemo() };
    expect(() => resolveUnderRootSync(at, '/srv/originals/a')).toThrow(PathInStateDirectory);
    expect(() => resolveUnderRootSync(at, '/srv/originals/b')).toThrow(`${join(root, 'srv')} is a symbolic link`);
  });

  test('refuses it on the real machine too, where every link is followed', async () => {
    const stateDir = join(outside, 'state');
    await mkdir(stateDir);
    await symlink(stateDir, join(outside, 'alias'));
    const refusal = resolveUnderRoot({ root: '/', stateDir }, join(outside, 'alias/state.json'));
    await expect(refusal).rejects.toThrow(`${join(outside, 'alias')} is a symbolic link to ${stateDir}`);
    expect(await resolveUnderRoot({ root: '/', stateDir }, join(outside, 'elsewhere/x'))).toBe(join(outside, 'elsewhere/x'));
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
    const memo = new PassMemo();
    const { directories } = memo;
    await mkdir(join(root, 'etc/app'), { recursive: true });
    expect(resolveUnderRootSync({ ...under(root), pass: memo }, '/etc/app/a.conf')).toBe(join(root, 'etc/app/a.conf'));
    expect([...directories.values()]).toEqual([join(root, 'etc/app')]);

    // Remembered: a link put in its place afterwards is not walked again within the same pass.
    await rm(join(root, 'etc/app'), { recursive: true });
    await symlink(outside, join(root, 'etc/app'));
    expect(resolveUnderRootSync({ ...under(root), pass: memo }, '/etc/app/b.conf')).toBe(join(root, 'etc/app/b.conf'));
    // Without the memo, the next pass sees the link and refuses it.
    expect(() => resolveUnderRootSync(under(root), '/etc/app/b.conf')).toThrow(PathEscapesRoot);

    expect(resolveUnderRootSync({ ...under(root), pass: memo }, '/srv/new/c.conf')).toBe(join(root, 'srv/new/c.conf'));
    expect(directories.size).toBe(1);
  });
});

// A user who owns a directory on a declared path (www-data's /srv/www) tries to make the host,
// which runs as root, write where only root may: a link in their directory pointing at /etc, or
// their own link dropped in a world-writable directory. Both stay inside the root.
const isRoot = process.getuid?.() === 0;
const asRoot = isRoot ? describe : describe.skip;
asRoot('resolveUnderRoot and links other users could have made', () => {
  const USER = 33;

  test('refuses a link in a directory another user owns, naming the link and the owner', async () => {
    await mkdir(join(root, 'etc'));
    await mkdir(join(root, 'srv/www'), { recursive: true });
    await chown(join(root, 'srv/www'), USER, USER);
    await symlink('/etc', join(root, 'srv/www/site'));
    const refusal = resolveUnderRoot(under(root), '/srv/www/site/index.html');
    await expect(refusal).rejects.toThrow(UnsafeLink);
    await expect(refusal).rejects.toThrow(`passes through the symbolic link ${join(root, 'srv/www/site')}, and it is in ${join(root, 'srv/www')}, which belongs to uid ${USER}`);
  });

  test('refuses a link another user owns, even in a directory root owns', async () => {
    await mkdir(join(root, 'etc'));
    await mkdir(join(root, 'tmp'));
    await symlink('../etc', join(root, 'tmp/cache'));
    await lchown(join(root, 'tmp/cache'), USER, USER);
    await expect(resolveUnderRoot(under(root), '/tmp/cache/app.conf')).rejects.toThrow(`and it belongs to uid ${USER}`);
  });

  test('still writes into a directory another user owns, when no link is on the way', async () => {
    await mkdir(join(root, 'srv/www'), { recursive: true });
    await chown(join(root, 'srv/www'), USER, USER);
    expect(await resolveUnderRoot(under(root), '/srv/www/index.html')).toBe(join(root, 'srv/www/index.html'));
  });

  test('does not remember, for the rest of a pass, a directory another user could swap for a link', async () => {
    const memo = new PassMemo();
    await mkdir(join(root, 'etc'));
    await mkdir(join(root, 'srv/www/site'), { recursive: true });
    await chown(join(root, 'srv/www'), USER, USER);
    expect(resolveUnderRootSync({ ...under(root), pass: memo }, '/srv/www/site/a.html')).toBe(join(root, 'srv/www/site/a.html'));
    expect(memo.directories.size).toBe(0);
    await rm(join(root, 'srv/www/site'), { recursive: true });
    await symlink('/etc', join(root, 'srv/www/site'));
    expect(() => resolveUnderRootSync({ ...under(root), pass: memo }, '/srv/www/site/b.html')).toThrow(UnsafeLink);
  });
});
