import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KeyFileExists, KeyFileMalformed, KeyFileMissing, KeyFileTooOpen } from './key-errors';
import { readKeyFile, writeKeyFile } from './key-file';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-key-file-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const key = Uint8Array.from({ length: 32 }, (_, i) => i * 7);

describe('key files', () => {
  it('writes a key with mode 0600 and reads the same key back', async () => {
    const file = path.join(dir, 'controller.key');
    await writeKeyFile(file, key);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(await readKeyFile(file, { bytes: 32 })).toEqual(key);
    expect(await fs.readdir(dir)).toEqual(['controller.key']);
  });

  it('refuses a key file that group or other can read, and says to chmod 600 it', async () => {
    const file = path.join(dir, 'node.key');
    await writeKeyFile(file, key);
    await fs.chmod(file, 0o644);
    const refusal = await readKeyFile(file).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(KeyFileTooOpen);
    expect((refusal as KeyFileTooOpen).next).toContain(`chmod 600 ${file}`);
    expect((refusal as KeyFileTooOpen).message).toContain('644');
  });

  it('refuses a key file that group can write', async () => {
    const file = path.join(dir, 'node.key');
    await writeKeyFile(file, key);
    await fs.chmod(file, 0o620);
    await expect(readKeyFile(file)).rejects.toThrow(KeyFileTooOpen);
  });

  it('will not replace an existing key unless asked to', async () => {
    const file = path.join(dir, 'node.key');
    await writeKeyFile(file, key);
    const other = new Uint8Array(32).fill(1);
    await expect(writeKeyFile(file, other)).rejects.toThrow(KeyFileExists);
    expect(await readKeyFile(file)).toEqual(key);
    await writeKeyFile(file, other, { overwrite: true });
    expect(await readKeyFile(file)).toEqual(other);
    expect(await fs.readdir(dir)).toEqual(['node.key']);
  });

  it('says when there is no key file, with the next step the caller gives', async () => {
    const refusal = await readKeyFile(path.join(dir, 'absent.key'), { whenMissing: 'run mesh-control init' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(KeyFileMissing);
    expect((refusal as KeyFileMissing).next).toBe('run mesh-control init');
  });

  it('refuses a key of the wrong size or a file that is not base64', async () => {
    const short = path.join(dir, 'short.key');
    await writeKeyFile(short, key.subarray(0, 16));
    await expect(readKeyFile(short, { bytes: 32 })).rejects.toThrow(/16 bytes, expected 32/);
    const garbage = path.join(dir, 'garbage.key');
    await fs.writeFile(garbage, 'this is not a key\n', { mode: 0o600 });
    await expect(readKeyFile(garbage)).rejects.toThrow(KeyFileMalformed);
  });

  it('refuses to follow a symbolic link to a key', async () => {
    const file = path.join(dir, 'real.key');
    await writeKeyFile(file, key);
    await fs.symlink(file, path.join(dir, 'link.key'));
    await expect(readKeyFile(path.join(dir, 'link.key'))).rejects.toThrow(/symbolic link/);
  });
});
