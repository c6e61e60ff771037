import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContractViolation } from '../../../schema/parse';
import { ModuleCarriesSealedBox, SecretFileOwnerUnsaid } from '../secrets/secret-file-rules';
import { ModuleSourceUnreadable, readModuleSource } from './read-module-source';

let dir: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'module-source-'));
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function writeModule(folder: string, manifest: unknown): Promise<void> {
  await fs.mkdir(folder, { recursive: true });
  await fs.writeFile(path.join(folder, 'module.json'), JSON.stringify(manifest));
}

describe('reading a module for module add', () => {
  test('reads a folder holding module.json, carrying a file it names inline: text as text, anything else as base64', async () => {
    const folder = path.join(dir, 'web');
    await writeModule(folder, {
      name: 'web',
      version: '1.0',
      resources: [
        { shape: 'file', path: '/srv/web/index.html', content: { file: 'site/index.html' } },
        { shape: 'file', path: '/srv/web/logo.bin', content: { file: 'logo.bin' } },
        { shape: 'file', path: '/srv/web/version', content: { text: '1.0\n' } },
      ],
    });
    await fs.mkdir(path.join(folder, 'site'));
    await fs.writeFile(path.join(folder, 'site', 'index.html'), '<h1>héllo</h1>\n');
    await fs.writeFile(path.join(folder, 'logo.bin'), Buffer.from([0xff, 0x00, 0xfe]));
    const { manifest, file } = await readModuleSource(folder);
    expect(file).toBe(path.join(folder, 'module.json'));
    expect(manifest.resources.map((resource) => (resource.shape === 'file' ? resource.content : null))).toEqual([
      { text: '<h1>héllo</h1>\n' },
      { base64: '/wD+' },
      { text: '1.0\n' },
    ]);
  });

  test('reads a module.json given by its own path', async () => {
    await writeModule(dir, { name: 'tools', version: '3', upgrade_policy: 'together', resources: [] });
    const { manifest } = await readModuleSource(path.join(dir, 'module.json'));
    expect(manifest).toEqual({ name: 'tools', version: '3', upgrade_policy: 'together', resources: [] });
  });

  test('refuses content named outside the module folder, by a path or through a link', async () => {
    const folder = path.join(dir, 'web');
    await fs.writeFile(path.join(dir, 'secret'), 'not the module\'s\n');
    await writeModule(folder, { name: 'web', version: '1', resources: [{ shape: 'file', path: '/x', content: { file: '../secret' } }] });
    await expect(readModuleSource(folder)).rejects.toThrow(/outside the module folder/);
    await fs.symlink(path.join(dir, 'secret'), path.join(folder, 'link'));
    await writeModule(folder, { name: 'web', version: '1', resources: [{ shape: 'file', path: '/x', content: { file: 'link' } }] });
    await expect(readModuleSource(folder)).rejects.toThrow(/leads outside the module folder/);
  });

  test('says what is wrong with a folder without module.json, a file that is not JSON, and a missing referenced file', async () => {
    await expect(readModuleSource(dir)).rejects.toThrow(ModuleSourceUnreadable);
    await fs.writeFile(path.join(dir, 'module.json'), '{ "name": ');
    await expect(readModuleSource(dir)).rejects.toThrow(/not JSON/);
    await writeModule(dir, { name: 'web', version: '1', resources: [{ shape: 'file', path: '/x', content: { file: 'missing.txt' } }] });
    await expect(readModuleSource(dir)).rejects.toThrow(/a file the module names could not be read: "missing.txt"/);
  });

  test('names a bad field by its place in the file', async () => {
    await writeModule(dir, { name: 'web', version: '1.02', resources: [] });
    const error = await readModuleSource(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContractViolation);
    expect((error as ContractViolation).message).toMatch(/^module\.version: expected a version/);
  });
});

describe('a module file that names a secret', () => {
  const secretFile = { shape: 'file', path: '/etc/app/token', content: { secret: 'token' }, owner: 'app', mode: '0600' };

  test('is read as a reference, with its owner and mode as written', async () => {
    await writeModule(path.join(dir, 'app'), { name: 'app', version: '1', resources: [secretFile] });
    const { manifest } = await readModuleSource(path.join(dir, 'app'));
    expect(manifest.resources).toEqual([{ ...secretFile, group: 'root' }]);
  });

  test('is refused when it leaves its owner to the root default, naming the account to give', async () => {
    const { owner: _owner, ...unowned } = secretFile;
    await writeModule(path.join(dir, 'app'), { name: 'app', version: '1', resources: [unowned] });
    const refused = await readModuleSource(path.join(dir, 'app')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SecretFileOwnerUnsaid);
    expect((refused as SecretFileOwnerUnsaid).next).toMatch(/"owner": "app".*program running as its own account cannot read it/);
  });

  test('is refused when it carries a sealed box, which only the controller makes', async () => {
    const sealed = { ...secretFile, content: { sealed: { secret: 'app/token', version: 1, box: Buffer.alloc(60).toString('base64') } } };
    await writeModule(path.join(dir, 'app'), { name: 'app', version: '1', resources: [sealed] });
    await expect(readModuleSource(path.join(dir, 'app'))).rejects.toThrow(ModuleCarriesSealedBox);
  });
});
