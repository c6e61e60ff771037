import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { syncFileSystemsOf } from './sync-file-systems';

let dir: string;
let fds: number[];
let paths: string[];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sync-file-systems-'));
  paths = Array.from({ length: 3 }, (_, index) => path.join(dir, `file-${index}`));
  fds = paths.map((file) => {
    const fd = openSync(file, 'wx');
    writeSync(fd, 'written\n');
    return fd;
  });
});

afterEach(async () => {
  fds.forEach((fd) => closeSync(fd));
  await rm(dir, { recursive: true, force: true });
});

describe('syncFileSystemsOf', () => {
  test('syncs the file system the files are on with the system\'s sync -f', async () => {
    expect(await syncFileSystemsOf(fds, paths)).toBe(true);
  });

  test('says false when sync cannot be run, so the caller syncs each file itself', async () => {
    expect(await syncFileSystemsOf(fds, paths, path.join(dir, 'no-such-sync'))).toBe(false);
  });

  test('says false when sync fails (an old busybox refusing -f, a writeback error)', async () => {
    expect(await syncFileSystemsOf(fds, paths, 'false')).toBe(false);
  });

  test('says false for a descriptor that is not open, rather than throwing', async () => {
    const closed = openSync(path.join(dir, 'closed'), 'wx');
    closeSync(closed);
    expect(await syncFileSystemsOf([closed], [path.join(dir, 'closed')])).toBe(false);
  });
});
