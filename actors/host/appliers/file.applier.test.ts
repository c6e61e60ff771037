import { chmod, chown, link, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as z from 'zod';
import { FileResource } from '../../../schema/resource';
import { ProcessRunner } from '../../shared/process/command-runner';
import { UnknownAccount } from './accounts';
import type { ApplyContext } from './applier';
import { ApplyFailed } from './applier';
import { fileApplier } from './file.applier';
import { FILE_SYSTEM_SYNC_FROM } from './sync-file-systems';
import { PathEscapesRoot } from './root-path';

let root: string;
let scratch: string;
let ctx: ApplyContext;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-file-root-')));
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'mesh-file-scratch-')));
  ctx = { root, stateDir: join(scratch, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(scratch, { recursive: true, force: true });
});

function file(fields: Partial<z.input<typeof FileResource>> = {}): FileResource {
  return FileResource.parse({ shape: 'file', path: '/etc/app.conf', content: { text: 'listen 80\n' }, ...fields });
}

async function existing(path: string, content: string | Buffer, mode = 0o644): Promise<string> {
  const real = join(root, path);
  await mkdir(join(real, '..'), { recursive: true });
  await writeFile(real, content);
  await chmod(real, mode);
  return real;
}

describe('fileApplier.observe', () => {
  test('says a missing file is missing', async () => {
    expect(await fileApplier.observe(file(), ctx)).toEqual({ present: false, differences: ['no file at /etc/app.conf'] });
  });

  test('lists content, mode, owner and group differences one per line', async () => {
    const real = await existing('/etc/app.conf', 'listen 8080 # by hand\n', 0o600);
    await chown(real, 1000, 1001);
    const observed = await fileApplier.observe(file(), ctx);
    expect(observed).toEqual({
      present: true,
      differences: [
        'content differs (22 bytes, declared 10)',
        'mode is 0600, declared 0644',
        'owner is 1000, declared 0 (root)',
        'group is 1001, declared 0 (root)',
      ],
    });
  });

  test('tells content of the same length apart', async () => {
    await existing('/etc/app.conf', 'listen 81\n');
    expect((await fileApplier.observe(file(), ctx)).differences).toEqual(['content differs (10 bytes, declared 10)']);
  });

  test('finds nothing to change when the machine matches', async () => {
    await existing('/etc/app.conf', 'listen 80\n');
    expect(await fileApplier.observe(file(), ctx)).toEqual({ present: true, differences: [] });
  });

  test('names an owner the machine does not know as the difference', async () => {
    await existing('/etc/passwd', 'root:x:0:0::/root:/bin/sh\n');
    await existing('/etc/app.conf', 'listen 80\n');
    expect((await fileApplier.observe(file({ owner: 'deploy' }), ctx)).differences).toEqual([
      `owner is 0, declared "deploy", which is not in ${join(root, 'etc/passwd')}`,
    ]);
  });

  test('reports a path that leads outside the root as unreadable', async () => {
    await symlink(scratch, join(root, 'etc'));
    const observed = await fileApplier.observe(file(), ctx);
    expect(observed.unreadable).toMatch(/leads outside the root/);
    expect(observed.differences).toHaveLength(1);
  });
});

describe('fileApplier.apply', () => {
  test('writes a missing file and its parents, and reads back with no differences', async () => {
    const resource = file({ path: '/srv/app/app.conf', mode: '0640' });
    const outcome = await fileApplier.apply(resource, ctx);
    expect(outcome.output).toBe('created parent directories /srv, /srv/app (0755 root)');
    expect(await readFile(join(root, 'srv/app/app.conf'), 'utf8')).toBe('listen 80\n');
    expect((await stat(join(root, 'srv/app/app.conf'))).mode & 0o7777).toBe(0o640);
    for (const parent of ['srv', 'srv/app']) {
      const made = await stat(join(root, parent));
      expect({ mode: made.mode & 0o7777, uid: made.uid, gid: made.gid }).toEqual({ mode: 0o755, uid: 0, gid: 0 });
    }
    expect(await fileApplier.observe(resource, ctx)).toEqual({ present: true, differences: [] });
  });

  test('says nothing of parents when they were already there', async () => {
    await mkdir(join(root, 'etc'));
    expect(await fileApplier.apply(file(), ctx)).toEqual({});
  });

  test('writes base64 content as the bytes it decodes to', async () => {
    const bytes = Buffer.from([0, 255, 1, 254, 10, 13]);
    const resource = file({ path: '/opt/blob.bin', content: { base64: bytes.toString('base64') } });
    await fileApplier.apply(resource, ctx);
    expect(await readFile(join(root, 'opt/blob.bin'))).toEqual(bytes);
    expect((await fileApplier.observe(resource, ctx)).differences).toEqual([]);
  });

  test('sets owner and group resolved from the root\'s own account files', async () => {
    await existing('/etc/passwd', 'root:x:0:0::/root:/bin/sh\ndeploy:x:1234:1234::/home/deploy:/bin/sh\n');
    await existing('/etc/group', 'root:x:0:\nweb:x:2345:\n');
    const resource = file({ owner: 'deploy', group: 'web', mode: '0600' });
    await fileApplier.apply(resource, ctx);
    const written = await stat(join(root, 'etc/app.conf'));
    expect([written.uid, written.gid, written.mode & 0o7777]).toEqual([1234, 2345, 0o600]);
    expect((await fileApplier.observe(resource, ctx)).differences).toEqual([]);
  });

  test('changes only mode and owner in place when the content already matches', async () => {
    const real = await existing('/etc/app.conf', 'listen 80\n', 0o600);
    await chown(real, 1000, 1000);
    const before = await stat(real);
    await fileApplier.apply(file({ mode: '0644' }), ctx);
    const after = await stat(real);
    expect(after.ino).toBe(before.ino);
    expect([after.mode & 0o7777, after.uid, after.gid]).toEqual([0o644, 0, 0]);
  });

  test('keeps a setuid bit declared with an owner change (chown clears it)', async () => {
    const real = await existing('/usr/local/bin/tool', 'listen 80\n', 0o755);
    await chown(real, 1000, 1000);
    await fileApplier.apply(file({ path: '/usr/local/bin/tool', mode: '4755' }), ctx);
    expect((await stat(real)).mode & 0o7777).toBe(0o4755);
  });

  test('replaces a large file whole: a reader sees the old or the new content, never part, and no temporary file remains', async () => {
    const oldContent = Buffer.alloc(1024 * 1024, 'a');
    const newText = 'b'.repeat(8 * 1024 * 1024);
    const real = await existing('/var/lib/app/data.txt', oldContent);
    let done = false;
    let reads = 0;
    const seen = new Set<string>();
    const reader = (async () => {
      while (!done) {
        const content = await readFile(real);
        reads += 1;
        seen.add(content.equals(oldContent) ? 'old' : content.length === newText.length && content.toString() === newText ? 'new' : `partial ${content.length}`);
      }
    })();
    await fileApplier.apply(file({ path: '/var/lib/app/data.txt', content: { text: newText } }), ctx);
    done = true;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect([...seen].filter((kind) => kind !== 'old' && kind !== 'new')).toEqual([]);
    expect((await readFile(real)).toString()).toBe(newText);
    expect(await readdir(join(root, 'var/lib/app'))).toEqual(['data.txt']);
  });

  test('refuses to write over a directory at the path, and leaves it', async () => {
    await mkdir(join(root, 'etc/app.conf'), { recursive: true });
    await writeFile(join(root, 'etc/app.conf/inside'), 'kept');
    expect(await fileApplier.observe(file(), ctx)).toEqual({
      present: true,
      differences: ['a directory is at /etc/app.conf, where a file is declared'],
    });
    await expect(fileApplier.apply(file(), ctx)).rejects.toThrow(
      'a directory is at /etc/app.conf, where a file is declared; remove it by hand or declare a directory',
    );
    expect(await readFile(join(root, 'etc/app.conf/inside'), 'utf8')).toBe('kept');
  });

  test('refuses to replace a symbolic link at the path, and does not write through it', async () => {
    await mkdir(join(root, 'etc'));
    await writeFile(join(scratch, 'target'), 'elsewhere');
    await symlink(join(scratch, 'target'), join(root, 'etc/app.conf'));
    expect((await fileApplier.observe(file(), ctx)).differences).toEqual(['a symbolic link is at /etc/app.conf, where a file is declared']);
    await expect(fileApplier.apply(file(), ctx)).rejects.toThrow('a symbolic link is at /etc/app.conf, where a file is declared; remove it by hand');
    expect(await readFile(join(scratch, 'target'), 'utf8')).toBe('elsewhere');
    expect((await lstat(join(root, 'etc/app.conf'))).isSymbolicLink()).toBe(true);
  });

  test('refuses a directory on the way that is a link leading outside the root, writing nothing there', async () => {
    await symlink(scratch, join(root, 'etc'));
    const refusal = fileApplier.apply(file(), ctx);
    await expect(refusal).rejects.toBeInstanceOf(PathEscapesRoot);
    await expect(refusal).rejects.toThrow(/leads outside the root/);
    expect(await readdir(scratch)).toEqual([]);
  });

  test('refuses a directory on the way that is a link into the host\'s state directory, writing nothing there', async () => {
    // The state directory in its usual place under the root, and a link to it elsewhere in the
    // root: the path given is not the state directory's, so only where it leads can tell.
    const stateDir = join(root, 'var/lib/mesh-host');
    await mkdir(join(stateDir, 'originals'), { recursive: true });
    await symlink('var/lib/mesh-host', join(root, 'srv'));
    const planted = file({ path: '/srv/originals/file/etc/app.conf', content: { text: 'what adoption would hand back\n' } });
    const refusal = fileApplier.apply(planted, { ...ctx, stateDir });
    await expect(refusal).rejects.toThrow(`${join(root, 'srv')} is a symbolic link to ${stateDir}`);
    expect(fileApplier.refuse?.(planted, { ...ctx, stateDir })).toBeUndefined();
    expect(await readdir(join(stateDir, 'originals'))).toEqual([]);
    expect((await fileApplier.observe(planted, { ...ctx, stateDir })).unreadable).toMatch(/leads into the host's state directory/);
  });

  test('refuses a directory on the way that is a link to a directory outside the root, naming the link', async () => {
    await mkdir(join(root, 'srv'));
    await symlink(scratch, join(root, 'srv/data'));
    const refusal = fileApplier.apply(file({ path: '/srv/data/app.conf' }), ctx);
    await expect(refusal).rejects.toThrow(`${join(root, 'srv/data')} is a symbolic link to ${scratch}`);
    expect(await readdir(scratch)).toEqual([]);
  });

  test('refuses an owner name the root does not know, naming it', async () => {
    await existing('/etc/passwd', 'root:x:0:0::/root:/bin/sh\n');
    const refusal = fileApplier.apply(file({ owner: 'deploy' }), ctx);
    await expect(refusal).rejects.toBeInstanceOf(UnknownAccount);
    await expect(refusal).rejects.toThrow('no user named "deploy"');
    await expect(stat(join(root, 'etc/app.conf'))).rejects.toThrow(/ENOENT/);
  });

  test('writes nothing once the apply has been left', async () => {
    const left = new AbortController();
    left.abort();
    await expect(fileApplier.apply(file(), { ...ctx, signal: left.signal })).rejects.toBeInstanceOf(ApplyFailed);
    await expect(stat(join(root, 'etc'))).rejects.toThrow(/ENOENT/);
  });
});

describe('fileApplier and a hard link to a file outside the root', () => {
  // Someone replaced the file the host wrote with a second name for a private file of theirs,
  // outside the root: a different mode and owner, and (in the first case) the declared content.
  async function linkedToPrivate(content: string): Promise<{ real: string; outsider: string }> {
    const real = await existing('/etc/app.conf', 'listen 80\n');
    const outsider = join(scratch, 'private.key');
    await writeFile(outsider, content);
    await chmod(outsider, 0o600);
    await chown(outsider, 1000, 1000);
    await rm(real);
    await link(outsider, real);
    return { real, outsider };
  }

  test.each([
    ['the declared content, so only mode and owner differ', 'listen 80\n'],
    ['other content', 'secret\n'],
  ])('with %s, apply replaces the declared name and leaves the outside file as it was', async (_what, content) => {
    const { real, outsider } = await linkedToPrivate(content);
    await fileApplier.prepare?.([file()], ctx);
    await fileApplier.apply(file(), ctx);

    const outside = await stat(outsider);
    expect([outside.mode & 0o7777, outside.uid, outside.gid, outside.nlink]).toEqual([0o600, 1000, 1000, 1]);
    expect(await readFile(outsider, 'utf8')).toBe(content);
    const written = await stat(real);
    expect(written.ino).not.toBe(outside.ino);
    expect([written.mode & 0o7777, written.uid, written.gid]).toEqual([0o644, 0, 0]);
    expect(await readFile(real, 'utf8')).toBe('listen 80\n');
  });
});

describe('fileApplier.refuse', () => {
  test('refuses a file in the host\'s own state directory', () => {
    const stateFile = file({ path: '/state/state.json' });
    expect(fileApplier.refuse?.(stateFile, { ...ctx, stateDir: join(root, 'state') })).toMatch(/state directory/);
    expect(fileApplier.refuse?.(file(), ctx)).toBeUndefined();
  });
});

describe('fileApplier.remove', () => {
  test('removes the file', async () => {
    const real = await existing('/etc/app.conf', 'listen 80\n');
    expect(await fileApplier.remove('file:/etc/app.conf', ctx)).toBe('removed');
    await expect(stat(real)).rejects.toThrow(/ENOENT/);
  });

  test('counts a file already gone as removed', async () => {
    expect(await fileApplier.remove('file:/etc/app.conf', ctx)).toBe('removed');
  });

  test('leaves a directory that has taken the file\'s place, and says so', async () => {
    await mkdir(join(root, 'etc/app.conf'), { recursive: true });
    await expect(fileApplier.remove('file:/etc/app.conf', ctx)).rejects.toThrow(
      'left /etc/app.conf in place: a directory is there now, not the file the host wrote',
    );
    expect((await stat(join(root, 'etc/app.conf'))).isDirectory()).toBe(true);
  });
});

describe('fileApplier.keepOriginal', () => {
  test('keeps the bytes, and the mode and owner in a sidecar, before anything is written', async () => {
    const original = Buffer.from('# tuned by hand\nworkers 8\n');
    const real = await existing('/etc/app.conf', original, 0o640);
    await chown(real, 1000, 1001);
    const dir = join(scratch, 'originals');
    const kept = await fileApplier.keepOriginal(file(), ctx, dir);
    expect(kept).toBe(join(dir, 'etc/app.conf'));
    expect(await readFile(join(dir, 'etc/app.conf'))).toEqual(original);
    expect((await stat(join(dir, 'etc/app.conf'))).mode & 0o777).toBe(0o600);
    const sidecar = JSON.parse(await readFile(join(dir, 'etc/app.conf.meta.json'), 'utf8'));
    expect(sidecar).toMatchObject({ path: '/etc/app.conf', mode: '0640', uid: 1000, gid: 1001, size: original.length });
    await fileApplier.apply(file(), ctx);
    expect(await readFile(join(dir, 'etc/app.conf'))).toEqual(original);
  });

  test('never replaces a kept original with a later copy', async () => {
    const real = await existing('/etc/app.conf', 'the machine\'s own\n');
    const dir = join(scratch, 'originals');
    await fileApplier.keepOriginal(file(), ctx, dir);
    await writeFile(real, 'written later\n');
    expect(await fileApplier.keepOriginal(file(), ctx, dir)).toBe(join(dir, 'etc/app.conf'));
    expect(await readFile(join(dir, 'etc/app.conf'), 'utf8')).toBe('the machine\'s own\n');
  });

  test('a record left without its copy, by a host killed between the two, is kept again whole', async () => {
    const original = Buffer.from('# tuned by hand\n');
    await existing('/etc/app.conf', original, 0o640);
    const dir = join(scratch, 'originals');
    await mkdir(join(dir, 'etc'), { recursive: true });
    await writeFile(join(dir, 'etc/app.conf.meta.json'), '{"path": "/etc/app.conf", "mode": "06');
    expect(await fileApplier.keepOriginal(file(), ctx, dir)).toBe(join(dir, 'etc/app.conf'));
    expect(await readFile(join(dir, 'etc/app.conf'))).toEqual(original);
    expect(JSON.parse(await readFile(join(dir, 'etc/app.conf.meta.json'), 'utf8'))).toMatchObject({ path: '/etc/app.conf', mode: '0640', size: original.length });
  });

  test('writes no copy when its record cannot be written, so the original is never taken as kept without one', async () => {
    await existing('/etc/app.conf', 'the machine\'s own\n');
    const dir = join(scratch, 'originals');
    // A directory where the record goes: its rename into place fails.
    await mkdir(join(dir, 'etc/app.conf.meta.json'), { recursive: true });
    await expect(fileApplier.keepOriginal(file(), ctx, dir)).rejects.toThrow();
    expect(await readdir(join(dir, 'etc'))).toEqual(['app.conf.meta.json']);
  });

  test('keeps nothing when there is no file', async () => {
    expect(await fileApplier.keepOriginal(file(), ctx, join(scratch, 'originals'))).toBeUndefined();
  });
});

describe('fileApplier.prepare', () => {
  const temporaries = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((name) => name.endsWith('.tmp'));

  test('writes the new content beside the file without changing it, and apply then puts it in place', async () => {
    const real = await existing('/etc/app.conf', 'listen 8080\n', 0o600);
    await fileApplier.prepare?.([file({ mode: '0640' })], ctx);
    expect(await readFile(real, 'utf8')).toBe('listen 8080\n');
    const [prepared] = await temporaries(join(root, 'etc'));
    expect(prepared).toMatch(/^\.app\.conf\.nox-[0-9a-f]{12}\.tmp$/);
    expect((await stat(join(root, 'etc', prepared as string))).mode & 0o7777).toBe(0o640);

    await fileApplier.apply(file({ mode: '0640' }), ctx);
    expect(await readFile(real, 'utf8')).toBe('listen 80\n');
    expect((await stat(real)).mode & 0o7777).toBe(0o640);
    expect(await temporaries(join(root, 'etc'))).toEqual([]);
    expect(await fileApplier.observe(file({ mode: '0640' }), ctx)).toEqual({ present: true, differences: [] });
  });

  test('does not use what it prepared when the declaration changed before apply, and writes what is declared', async () => {
    await existing('/etc/app.conf', 'listen 8080\n');
    await fileApplier.prepare?.([file({ content: { text: 'old plan\n' } })], ctx);
    await fileApplier.apply(file({ content: { text: 'new plan\n' } }), ctx);
    expect(await readFile(join(root, 'etc/app.conf'), 'utf8')).toBe('new plan\n');
    expect(await temporaries(join(root, 'etc'))).toEqual([]);
  });

  test('prepares nothing where apply has work of its own to do: a missing directory, content already right', async () => {
    await existing('/etc/app.conf', 'listen 80\n', 0o600);
    await fileApplier.prepare?.([file(), file({ path: '/srv/new/app.conf' })], ctx);
    expect(await temporaries(join(root, 'etc'))).toEqual([]);
    await fileApplier.apply(file({ path: '/srv/new/app.conf' }), ctx);
    expect(await readFile(join(root, 'srv/new/app.conf'), 'utf8')).toBe('listen 80\n');
  });

  test.each([
    ['with one sync of the file system', FILE_SYSTEM_SYNC_FROM + 8],
    ['file by file below that size', FILE_SYSTEM_SYNC_FROM - 1],
  ])('prepares a batch %s, and apply puts each in place', async (_how, count) => {
    await mkdir(join(root, 'etc'), { recursive: true });
    const many = Array.from({ length: count }, (_, index) => file({ path: `/etc/many-${index}.conf`, content: { text: `setting = ${index}\n` } }));
    await fileApplier.prepare?.(many, ctx);
    expect(await temporaries(join(root, 'etc'))).toHaveLength(many.length);
    for (const resource of many) await fileApplier.apply(resource, ctx);
    expect(await temporaries(join(root, 'etc'))).toEqual([]);
    expect(await readFile(join(root, 'etc/many-7.conf'), 'utf8')).toBe('setting = 7\n');
  });

  test('asked again for the rest of a batch, leaves what it prepared already as it is', async () => {
    await mkdir(join(root, 'etc'), { recursive: true });
    await fileApplier.prepare?.([file()], ctx);
    const first = await temporaries(join(root, 'etc'));
    await fileApplier.prepare?.([file(), file({ path: '/etc/other.conf' })], ctx);
    const both = await temporaries(join(root, 'etc'));
    expect(both).toHaveLength(2);
    expect(both).toEqual(expect.arrayContaining(first));
    await fileApplier.apply(file(), ctx);
    await fileApplier.apply(file({ path: '/etc/other.conf' }), ctx);
    expect(await readdir(join(root, 'etc'))).toEqual(['app.conf', 'other.conf']);
  });

  test('leaves no temporary behind once what apply did not take is discarded', async () => {
    await mkdir(join(root, 'etc'), { recursive: true });
    await fileApplier.prepare?.([file(), file({ path: '/etc/other.conf' })], ctx);
    expect(await temporaries(join(root, 'etc'))).toHaveLength(2);
    await fileApplier.apply(file(), ctx);
    fileApplier.discardPrepared?.(ctx);
    expect(await readdir(join(root, 'etc'))).toEqual(['app.conf']);
  });
});

describe('temporaries a killed host left', () => {
  const LEFTOVER = '.app.conf.nox-0123456789ab.tmp';
  const leave = (): Promise<void> => writeFile(join(root, 'etc', LEFTOVER), 'half of a write');
  const present = async (): Promise<boolean> => (await readdir(join(root, 'etc'))).includes(LEFTOVER);

  test('are swept from a directory before the host first writes there, once per host rather than once per pass', async () => {
    await mkdir(join(root, 'etc'), { recursive: true });
    await leave();
    await fileApplier.apply(file(), ctx);
    expect(await present()).toBe(false);

    // The same host's next pass has an apply context of its own, and the directory is not read again.
    await leave();
    await fileApplier.apply(file({ path: '/etc/other.conf' }), { ...ctx, pass: undefined });
    expect(await present()).toBe(true);

    // A host started afterwards (a runner of its own) sweeps it.
    await fileApplier.apply(file({ path: '/etc/third.conf' }), { ...ctx, runner: new ProcessRunner() });
    expect(await present()).toBe(false);
  });
});
