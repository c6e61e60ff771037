import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { CODE_CACHE_FILE, compileBundle, decodeCodeCache, encodeCodeCache, readCodeCache, startBundle } from './code-cache';

// Two bundles of the same length that do different things: V8 matches cached data to a source
// by its length alone, so these are the case the header's digest is there for.
const BUNDLE_A = Buffer.from('"use strict";\nmodule.exports.said = (function said() { return "from A"; })();\n');
const BUNDLE_B = Buffer.from('"use strict";\nmodule.exports.said = (function said() { return "from B"; })();\n');

/** A cache made from `bytes` as the build makes one: compiled, run, then V8's data taken. */
function cacheOf(file: string, bytes: Buffer): Buffer {
  const compiled = compileBundle(file, bytes);
  compiled.run();
  return encodeCodeCache(bytes, compiled.script.createCachedData());
}

let dir: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'code-cache-test-'));
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the host bundle\'s code cache', () => {
  test('V8 alone would run a cache of another bundle of the same length, so the header refuses it', () => {
    const file = path.join(dir, 'bundle.cjs');
    const cacheOfA = cacheOf(file, BUNDLE_A);
    const data = cacheOfA.subarray(cacheOfA.indexOf(0x0a, cacheOfA.indexOf(0x0a) + 1) + 1);
    // What the check is for: given A's data for B, V8 takes it and runs A's code.
    const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${BUNDLE_B.toString()}\n})`, { filename: file, cachedData: data });
    const module = { exports: {} as { said?: string } };
    (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, require, module, file, dir);
    expect({ rejected: script.cachedDataRejected, said: module.exports.said }).toEqual({ rejected: false, said: 'from A' });

    expect(decodeCodeCache(cacheOfA, BUNDLE_B)).toEqual({ used: false, why: 'made from another bundle' });
    expect(decodeCodeCache(cacheOfA, BUNDLE_A).used).toBe(true);
  });

  test('a cache made by another Node, cut short, or changed after its header is not used', () => {
    const file = path.join(dir, 'bundle.cjs');
    const cache = cacheOf(file, BUNDLE_A);
    const otherNode = Buffer.from(cache.toString('latin1').replace(`"node":"${process.version}"`, '"node":"v99.0.0"'), 'latin1');
    expect(decodeCodeCache(otherNode, BUNDLE_A)).toEqual({ used: false, why: `made by node v99.0.0, this is ${process.version}` });
    expect(decodeCodeCache(cache.subarray(0, cache.length - 10), BUNDLE_A)).toEqual({ used: false, why: 'its data is not what its header says (cut short or changed)' });
    const changed = Buffer.from(cache);
    changed[changed.length - 1] ^= 0xff;
    expect(decodeCodeCache(changed, BUNDLE_A)).toEqual({ used: false, why: 'its data is not what its header says (cut short or changed)' });
    expect(decodeCodeCache(Buffer.from('something else\n'), BUNDLE_A)).toEqual({ used: false, why: 'not a code cache of this format' });
  });

  test('a cache another account could have written, or reached through a link, is not used', async () => {
    const file = path.join(dir, 'bundle.cjs');
    const cacheFile = path.join(dir, CODE_CACHE_FILE);
    await fs.writeFile(cacheFile, cacheOf(file, BUNDLE_A), { mode: 0o644 });
    const owner = (await fs.stat(cacheFile)).uid;
    expect(readCodeCache(cacheFile, owner, BUNDLE_A).used).toBe(true);

    await fs.chmod(cacheFile, 0o666);
    expect(readCodeCache(cacheFile, owner, BUNDLE_A)).toEqual({ used: false, why: 'writable by others (mode 666)' });
    await fs.chmod(cacheFile, 0o644);

    const linked = path.join(dir, 'linked.bin');
    await fs.symlink(cacheFile, linked);
    expect(readCodeCache(linked, owner, BUNDLE_A)).toEqual({ used: false, why: 'cannot be opened (ELOOP)' });
    expect(readCodeCache(path.join(dir, 'missing.bin'), owner, BUNDLE_A)).toEqual({ used: false, why: 'cannot be opened (ENOENT)' });
    if (owner === 0) return; // root's cache is accepted for any bundle owner, as root could write the bundle too
    expect(readCodeCache(cacheFile, owner + 1, BUNDLE_A).used).toBe(false);
  });

  test('starts a bundle with the cache beside it, and from its source when the cache is of another bundle', async () => {
    const file = path.join(dir, 'bundle.cjs');
    await fs.writeFile(file, BUNDLE_B);
    await fs.writeFile(path.join(dir, CODE_CACHE_FILE), cacheOf(file, BUNDLE_A), { mode: 0o644 });
    const stale = startBundle(file);
    expect(stale.cache).toEqual({ used: false, why: 'made from another bundle' });

    await fs.writeFile(path.join(dir, CODE_CACHE_FILE), cacheOf(file, BUNDLE_B), { mode: 0o644 });
    const fresh = startBundle(file);
    expect({ used: fresh.cache.used, rejected: fresh.rejected }).toEqual({ used: true, rejected: false });
  });
});
