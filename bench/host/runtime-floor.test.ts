import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { residentMb } from '../proc-stat';
import { builtinsLoadedBy, publicBuiltins, startRuntimeFloor } from './runtime-floor';

describe('publicBuiltins', () => {
  it('keeps the public built-in modules, once each and sorted, and drops Node\'s internal ones', () => {
    expect(publicBuiltins(['tls', 'internal/tls/secure-context', 'fs', 'tls', 'internal/fs/utils', '_tls_wrap'])).toEqual(['_tls_wrap', 'fs', 'tls']);
  });
});

describe('the runtime floor', () => {
  let workDir: string;

  beforeEach(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'runtime-floor-'));
  });

  afterEach(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('finds the built-in modules a host-like process loaded before and after its first pass', async () => {
    const program = path.join(workDir, 'host-like.cjs');
    await writeFile(program, [
      "require('node:dgram');",
      "process.stdout.write('pass (start): 0 changed\\n');",
      "setTimeout(() => require('node:zlib'), 50);",
      'setInterval(() => {}, 1 << 30);',
    ].join('\n'));
    const modules = await builtinsLoadedBy([process.execPath, program], { workDir, env: process.env, settleMs: 600 });
    expect(modules).toEqual(expect.arrayContaining(['dgram', 'zlib', 'fs']));
    expect(modules.some((name) => name.startsWith('internal/'))).toBe(false);
    expect(modules).not.toContain('http2');
  });

  it('starts Node with the modules loaded, and says which one it could not load', async () => {
    const floor = await startRuntimeFloor(['dgram'], { workDir, env: process.env, flags: ['--no-opt'] });
    try {
      expect(residentMb(floor.pid)).toBeGreaterThan(5);
    } finally {
      await floor.stop();
    }
    await expect(startRuntimeFloor(['no-such-module'], { workDir, env: process.env, flags: [] })).rejects.toThrow(/no-such-module/);
  });
});
