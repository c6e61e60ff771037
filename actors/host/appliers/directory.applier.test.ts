import { chmod, chown, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as z from 'zod';
import { DirectoryResource } from '../../../schema/resource';
import { ProcessRunner } from '../../shared/process/command-runner';
import type { ApplyContext } from './applier';
import { directoryApplier } from './directory.applier';
import { PathEscapesRoot } from './root-path';

let root: string;
let scratch: string;
let ctx: ApplyContext;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-dir-root-')));
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'mesh-dir-scratch-')));
  ctx = { root, stateDir: join(scratch, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(scratch, { recursive: true, force: true });
});

function directory(fields: Partial<z.input<typeof DirectoryResource>> = {}): DirectoryResource {
  return DirectoryResource.parse({ shape: 'directory', path: '/srv/app', ...fields });
}

async function attributes(path: string): Promise<{ mode: number; uid: number; gid: number }> {
  const found = await stat(join(root, path));
  return { mode: found.mode & 0o7777, uid: found.uid, gid: found.gid };
}

describe('directoryApplier.observe', () => {
  test('says a missing directory is missing', async () => {
    expect(await directoryApplier.observe(directory(), ctx)).toEqual({ present: false, differences: ['no directory at /srv/app'] });
  });

  test('lists mode, owner and group differences one per line', async () => {
    await mkdir(join(root, 'srv/app'), { recursive: true });
    await chmod(join(root, 'srv/app'), 0o700);
    await chown(join(root, 'srv/app'), 1000, 1001);
    expect(await directoryApplier.observe(directory({ mode: '0750' }), ctx)).toEqual({
      present: true,
      differences: ['mode is 0700, declared 0750', 'owner is 1000, declared 0 (root)', 'group is 1001, declared 0 (root)'],
    });
  });

  test('says a file where a directory is declared is a difference', async () => {
    await mkdir(join(root, 'srv'));
    await writeFile(join(root, 'srv/app'), 'x');
    expect(await directoryApplier.observe(directory(), ctx)).toEqual({
      present: true,
      differences: ['a file is at /srv/app, where a directory is declared'],
    });
  });
});

describe('directoryApplier.apply', () => {
  test('makes the directory and its parents; only the directory takes the declared mode and owner', async () => {
    const resource = directory({ path: '/srv/app/cache', mode: '2770', owner: '1000', group: '1000' });
    const outcome = await directoryApplier.apply(resource, ctx);
    expect(outcome.output).toBe('created parent directories /srv, /srv/app (0755 root)');
    expect(await attributes('/srv/app/cache')).toEqual({ mode: 0o2770, uid: 1000, gid: 1000 });
    expect(await attributes('/srv')).toEqual({ mode: 0o755, uid: 0, gid: 0 });
    expect(await attributes('/srv/app')).toEqual({ mode: 0o755, uid: 0, gid: 0 });
    expect(await directoryApplier.observe(resource, ctx)).toEqual({ present: true, differences: [] });
  });

  test('changes the mode of a directory that is there, leaving its contents', async () => {
    await mkdir(join(root, 'srv/app'), { recursive: true });
    await writeFile(join(root, 'srv/app/data'), 'theirs');
    const before = await stat(join(root, 'srv/app'));
    await directoryApplier.apply(directory({ mode: '0700' }), ctx);
    const after = await stat(join(root, 'srv/app'));
    expect(after.ino).toBe(before.ino);
    expect(after.mode & 0o7777).toBe(0o700);
    expect(await readFile(join(root, 'srv/app/data'), 'utf8')).toBe('theirs');
  });

  test('refuses to replace a file at the path', async () => {
    await mkdir(join(root, 'srv'));
    await writeFile(join(root, 'srv/app'), 'theirs');
    await expect(directoryApplier.apply(directory(), ctx)).rejects.toThrow(
      'a file is at /srv/app, where a directory is declared; remove it by hand or declare a file',
    );
    expect(await readFile(join(root, 'srv/app'), 'utf8')).toBe('theirs');
  });

  test('refuses a parent that is a link leading outside the root', async () => {
    await symlink(scratch, join(root, 'srv'));
    await expect(directoryApplier.apply(directory(), ctx)).rejects.toBeInstanceOf(PathEscapesRoot);
    expect(await readdir(scratch)).toEqual([]);
  });

  test('refuses a path through a link into the host\'s state directory, and changes nothing there', async () => {
    const stateDir = join(root, 'var/lib/mesh-host');
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    await chmod(stateDir, 0o700);
    await symlink('var/lib', join(root, 'data'));
    const at = { ...ctx, stateDir };
    await expect(directoryApplier.apply(directory({ path: '/data/mesh-host', mode: '0777' }), at)).rejects.toThrow(
      `/data/mesh-host leads into the host's state directory ${stateDir}: ${join(root, 'data')} is a symbolic link to ${join(root, 'var/lib')}`,
    );
    await expect(directoryApplier.apply(directory({ path: '/data/mesh-host/originals' }), at)).rejects.toThrow(/leads into the host's state directory/);
    expect((await attributes('/var/lib/mesh-host')).mode).toBe(0o700);
    expect(await readdir(stateDir)).toEqual([]);
  });

  test('refuses a group name the root does not know, naming it and the file', async () => {
    await mkdir(join(root, 'etc'));
    await writeFile(join(root, 'etc/group'), 'root:x:0:\n');
    await expect(directoryApplier.apply(directory({ group: 'web' }), ctx)).rejects.toThrow(
      `no group named "web": it is not in ${join(root, 'etc/group')}`,
    );
  });
});

describe('directoryApplier.remove', () => {
  test('removes an empty directory', async () => {
    await mkdir(join(root, 'srv/app'), { recursive: true });
    expect(await directoryApplier.remove('directory:/srv/app', ctx)).toBe('removed');
    await expect(stat(join(root, 'srv/app'))).rejects.toThrow(/ENOENT/);
    expect((await stat(join(root, 'srv'))).isDirectory()).toBe(true);
  });

  test('counts a directory already gone as removed', async () => {
    expect(await directoryApplier.remove('directory:/srv/app', ctx)).toBe('removed');
  });

  test('leaves a directory that holds files, naming up to five of them', async () => {
    await mkdir(join(root, 'srv/app'), { recursive: true });
    for (const name of ['g', 'f', 'e', 'd', 'c', 'b', 'a']) await writeFile(join(root, 'srv/app', name), name);
    await expect(directoryApplier.remove('directory:/srv/app', ctx)).rejects.toThrow(
      'left /srv/app in place: it holds files the host does not own (a, b, c, d, e and 2 more)',
    );
    expect(await readdir(join(root, 'srv/app'))).toHaveLength(7);
  });
});

describe('directoryApplier.keepOriginal', () => {
  test('keeps the mode and owner of a directory that is there', async () => {
    await mkdir(join(root, 'srv/app'), { recursive: true });
    await chmod(join(root, 'srv/app'), 0o710);
    await chown(join(root, 'srv/app'), 1000, 1001);
    const kept = await directoryApplier.keepOriginal(directory(), ctx, join(scratch, 'originals'));
    expect(kept).toBe(join(scratch, 'originals/srv/app.meta.json'));
    expect(JSON.parse(await readFile(kept ?? '', 'utf8'))).toMatchObject({ path: '/srv/app', mode: '0710', uid: 1000, gid: 1001 });
    // Written beside and renamed in place: nothing but the record is there.
    expect(await readdir(join(scratch, 'originals/srv'))).toEqual(['app.meta.json']);
  });

  test('keeps nothing when there is no directory', async () => {
    expect(await directoryApplier.keepOriginal(directory(), ctx, join(scratch, 'originals'))).toBeUndefined();
  });
});
