import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHostStatus, STATUS_FILE, StatusWriter, type HostStatus } from './host-status';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'host-status-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

function statusSaying(lifecycle: string, writtenAt: string): HostStatus {
  return {
    format: 1,
    pid: process.pid,
    started_at: '2026-12-07T08:00:00.000Z',
    written_at: writtenAt,
    lifecycle,
    node: 'web-1',
    linked_since: null,
    last_linked_at: null,
    last_pass: null,
    last_declaration: null,
    tree: null,
  };
}

describe('the status file writer', () => {
  // Regression: a declaration taken, its pass begun and its pass ended each rewrote the file.
  test('changes asked for together are written as one file, with what is true when it is written', async () => {
    let lifecycle = 'hosted';
    let composed = 0;
    const writer = new StatusWriter(dir, () => {
      composed += 1;
      return statusSaying(lifecycle, `2026-12-07T08:00:0${composed}.000Z`);
    }, (error) => { throw error; });
    writer.changed();
    lifecycle = 'enrolled.operating';
    writer.changed();
    writer.changed();
    await writer.flushed();
    expect(composed).toBe(1);
    expect(await readHostStatus(dir)).toMatchObject({ lifecycle: 'enrolled.operating' });
  });

  test('a status that says nothing new is not written again; one that does is', async () => {
    let lifecycle = 'hosted';
    let second = 0;
    const writer = new StatusWriter(dir, () => statusSaying(lifecycle, `2026-12-07T08:00:${String((second += 1)).padStart(2, '0')}.000Z`), (error) => { throw error; }, 0);
    const file = path.join(dir, STATUS_FILE);
    writer.changed();
    await writer.flushed();
    const first = await fs.stat(file);
    writer.changed();
    await writer.flushed();
    // A write renames a new file into place: the same inode is the same file.
    expect((await fs.stat(file)).ino).toBe(first.ino);
    lifecycle = 'disconnected';
    writer.changed();
    await writer.flushed();
    expect((await fs.stat(file)).ino).not.toBe(first.ino);
    expect(await readHostStatus(dir)).toMatchObject({ lifecycle: 'disconnected' });
  });
});
