import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { SecretValueEmpty, SecretValueTooLarge } from '../secrets/secret-errors';
import { readValueFromStdin, SecretSetCommand, SecretValueNotGiven } from './secret.command';
import { runCommand } from './testing/run-command';

// What `secret set` refuses before it asks the controller anything: no controller runs here.

describe('secret set, before the controller is asked', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'secret-command-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('refuses an empty file and one over the bound, naming what to give instead', async () => {
    const empty = path.join(dir, 'empty');
    await fs.writeFile(empty, '');
    const refused = await runCommand(SecretSetCommand, ['secret', 'set', 'web', 'db-password', '--from-file', empty, '--dir', dir]);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/^error: the value given for secret web\/db-password is empty; nothing was kept\nnext: .*--from-file FILE/)]);
    const large = path.join(dir, 'large');
    await fs.writeFile(large, Buffer.alloc(64 * 1024 + 1, 0x61));
    const over = await runCommand(SecretSetCommand, ['secret', 'set', 'web', 'db-password', '--from-file', large, '--dir', dir]);
    expect([over.code, over.stderr]).toEqual([1, expect.stringMatching(/is 65,537 bytes, over the 65,536 bytes a secret may hold/)]);
  });

  test('refuses a secret name that is not one, and the value is never an argument', async () => {
    const bad = await runCommand(SecretSetCommand, ['secret', 'set', 'web', 'Bad Name', '--dir', dir]);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringMatching(/expected a secret name/)]);
    const extra = await runCommand(SecretSetCommand, ['secret', 'set', 'web', 'db-password', 'hunter2', '--dir', dir]);
    expect([extra.code, extra.stderr]).toEqual([2, expect.stringMatching(/takes no value on the command line[\s\S]*next: .*shell history/)]);
    expect(extra.stderr).not.toContain('hunter2');
  });

  test('reads standard input exactly, refuses a terminal, and stops reading past the bound', async () => {
    expect((await readValueFromStdin(Readable.from([Buffer.from('a\n'), Buffer.from('b')]), 'web', 'x')).toString()).toBe('a\nb');
    const tty = Object.assign(new PassThrough(), { isTTY: true });
    await expect(readValueFromStdin(tty, 'web', 'x')).rejects.toThrow(SecretValueNotGiven);
    await expect(readValueFromStdin(Readable.from([]), 'web', 'x')).rejects.toThrow(SecretValueEmpty);
    let pulled = 0;
    const endless = new Readable({
      read() {
        pulled += 1;
        this.push(Buffer.alloc(16 * 1024, 0x62));
      },
    });
    await expect(readValueFromStdin(endless, 'web', 'x')).rejects.toThrow(SecretValueTooLarge);
    expect(pulled).toBeLessThan(10);
  });
});
