import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fetchNode, HOST_RUNTIME_VERSION, RuntimeNotAsFetched } from './fetch-node';

const exec = promisify(execFile);

describe('fetchNode', () => {
  test('gives the pinned LTS release from the registry, and the binary runs as that version', async () => {
    const binary = await fetchNode();
    expect((await exec(binary, ['-p', 'process.version'])).stdout.trim()).toBe(`v${HOST_RUNTIME_VERSION}`);
    expect(Number(HOST_RUNTIME_VERSION.split('.')[0]) % 2).toBe(0);
  }, 180_000);

  test('refuses a cached binary that is not the version it is kept as, saying what to remove', async () => {
    const cache = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-node-cache-'));
    try {
      const dir = path.join(cache, 'v24.0.0-linux-x64');
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'node'), '#!/bin/sh\necho v20.1.0\n', { mode: 0o755 });
      const refusal = fetchNode('24.0.0', cache);
      await expect(refusal).rejects.toThrow(RuntimeNotAsFetched);
      await expect(refusal).rejects.toThrow(`says it is Node v20.1.0, not v24.0.0; remove ${dir}`);
    } finally {
      await fs.rm(cache, { recursive: true, force: true });
    }
  });
});
