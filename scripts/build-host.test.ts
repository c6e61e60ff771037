import { execFile, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { fromSeed } from '@nats-io/nkeys';
import { nkeySeedOf } from '../actors/shared/crypto/nkey';
import {
  buildHost,
  bundleHost,
  CACHED_START_FILE,
  ControllerCodeInHostBundle,
  escapeNonAscii,
  inspectNodeBinary,
  packageVersionFor,
  projectVersion,
  REPOSITORY,
  tarballName,
  zodMethodsOnPrototypes,
  type HostBuild,
} from './build-host';
import { HOST_RUNTIME_VERSION } from './fetch-node';
import type { Resource } from '../schema/resource';
import { generateNodeIdentity, generateSigningKeyPair, ready } from '../actors/shared/crypto';
import { LIBSODIUM_FILE } from '../actors/shared/crypto/libsodium-beside-bundle';
import { CODE_CACHE_FILE } from '../actors/host/start/code-cache';
import { sealToNode } from '../actors/shared/crypto/seal';
import { HostStore } from '../actors/host/store/host-store';
import { enrolledState } from '../bench/host/enrolled-store';
import { build } from 'esbuild';

// The real build, once for the suite (about ten seconds: the single executable is a 120 MB copy
// of the pinned Node, fetched once into .cache/node/), and what it made run as a person would run it: from an empty folder far from any
// node_modules, the single executable with no Node on PATH.

const exec = promisify(execFile);
const MOTD = path.join(REPOSITORY, 'examples', 'motd.json');

let scratch: string;
let outcome: HostBuild;
let version: string;

beforeAll(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'build-host-test-'));
  version = await projectVersion();
  outcome = await buildHost({ outDir: path.join(scratch, 'dist') });
  // On a clean clone the build first fetches the pinned Node (127 MB) into .cache/node/.
}, 300_000);

afterAll(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

/** A fresh empty folder, checked to have no node_modules in it or above it. */
async function emptyFolder(name: string): Promise<string> {
  const dir = path.join(scratch, name);
  await fs.mkdir(dir);
  for (let at = dir; ; at = path.dirname(at)) {
    await expect(fs.access(path.join(at, 'node_modules'))).rejects.toThrow();
    if (path.dirname(at) === at) break;
  }
  return dir;
}

/**
 * A PATH holding only what examples/motd.json's action runs (sh, date), and no node. Where the
 * single executable would need Node from the machine, it fails here.
 */
async function pathWithoutNode(): Promise<string> {
  const bin = path.join(scratch, 'bin-without-node');
  await fs.mkdir(bin, { recursive: true });
  for (const tool of ['sh', 'date']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    await fs.symlink(found, path.join(bin, tool)).catch(() => undefined);
  }
  expect(spawnSync(path.join(bin, 'sh'), ['-c', 'command -v node'], { env: { PATH: bin } }).status).not.toBe(0);
  return bin;
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function runIn(cwd: string, argv: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  const [program, ...args] = argv as [string, ...string[]];
  try {
    const { stdout, stderr } = await exec(program, args, { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

/** Runs version, profile and apply (examples/motd.json into a root in the folder) and reads back what they did. */
async function exercise(cwd: string, host: string[], env: NodeJS.ProcessEnv) {
  const versionRun = await runIn(cwd, [...host, 'version'], env);
  const profileRun = await runIn(cwd, [...host, 'profile', '--json'], env);
  await fs.mkdir(path.join(cwd, 'root'));
  const applyRun = await runIn(cwd, [...host, 'apply', MOTD, '--root', 'root'], env);
  const read = (file: string) => fs.readFile(path.join(cwd, 'root', file), 'utf8').catch(() => null);
  return {
    version: versionRun,
    profile: { code: profileRun.code, arch: profileRun.code === 0 ? (JSON.parse(profileRun.stdout) as { arch: string }).arch : profileRun.stderr },
    apply: { code: applyRun.code, stderr: applyRun.stderr },
    motd: await read('etc/motd.d/10-mesh'),
    stamped: (await read('var/lib/first-apply')) !== null,
    knownGood: await read('var/lib/mesh-host/launch/known-good'),
  };
}

describe('npm run build:host', () => {
  test('bundles the host into one file without the controller store', () => {
    expect(outcome.bundle.file).toBe(path.join(scratch, 'dist', 'nox-mesh-host.cjs'));
    expect(outcome.bundle.packages).toEqual(expect.arrayContaining(['clipanion', 'xstate', 'zod', '@nats-io/transport-node']));
    expect(outcome.bundle.packages.filter((name) => /pglite|^pg|^postgres/.test(name))).toEqual([]);
    // A bundle that has grown past a few megabytes has pulled in something it should not.
    expect(outcome.bundle.bytes).toBeLessThan(4 * 1024 * 1024);
  });

  test('writes the bundle in ASCII, so V8 holds its source at one byte a character', async () => {
    const text = await fs.readFile(outcome.bundle.file, 'utf8');

    expect(text.match(/[\u0080-\uffff]/g) ?? []).toEqual([]);
  });

  test('carries zod\'s English messages alone, and says what is wrong with a declaration as the checkout does', async () => {
    const cwd = await emptyFolder('bundle-contract');
    await fs.copyFile(outcome.bundle.file, path.join(cwd, 'nox-mesh-host.cjs'));
    await fs.mkdir(path.join(cwd, 'root'));
    const bad = path.join(cwd, 'bad.json');
    await fs.writeFile(bad, JSON.stringify({ resources: [{ shape: 'file', path: '/etc/motd', content: { text: 'x' }, mode: '644' }] }));
    const env = { PATH: process.env.PATH, NODE_PATH: '' };

    const bundled = await runIn(cwd, [process.execPath, 'nox-mesh-host.cjs', 'apply', bad, '--root', 'root'], env);
    const checkout = await runIn(cwd, [process.execPath, path.join(REPOSITORY, 'bin', 'nox-mesh-host'), 'apply', bad, '--root', 'root'], env);

    expect(bundled.stderr).toMatch(/^error: declaration\.resources\[0\]\.mode: expected an octal mode like "0644"/);
    expect(bundled).toEqual(checkout);
    const locales = [...(await fs.readFile(outcome.bundle.file, 'utf8')).matchAll(/^\/\/ \S*zod\/v4\/locales\/(\S+)\.js$/gm)].map((match) => match[1]);
    expect(locales).toEqual(['en', 'english-only']);
  });

  test('gives nkeys Node\'s Ed25519 for tweetnacl, and a login nonce is signed to the same bytes', async () => {
    expect(outcome.bundle.packages).toContain('@nats-io/nkeys');
    expect(outcome.bundle.packages).not.toContain('tweetnacl');
    const dir = await emptyFolder('bundle-nkeys');
    const file = path.join(dir, 'nkeys-sign.cjs');
    const seed = Buffer.alloc(32, 7);
    const nonce = 'c2VydmVyLW5vbmNl';
    const sign = `const { nkeySeedOf } = require('./actors/shared/crypto/nkey'); const { fromSeed } = require('@nats-io/nkeys'); ` +
      `process.stdout.write(Buffer.from(fromSeed(nkeySeedOf(Buffer.alloc(32, 7))).sign(new TextEncoder().encode('${nonce}'))).toString('hex'));`;
    await bundleHost({ outFile: file, version, entry: sign });
    const bundled = await runIn(dir, [process.execPath, file], { PATH: process.env.PATH });
    // The checkout's nkeys, on the real tweetnacl.
    const expected = Buffer.from(fromSeed(nkeySeedOf(seed)).sign(new TextEncoder().encode(nonce))).toString('hex');

    expect(bundled.stdout).toBe(expected);
    expect(await fs.readFile(file, 'utf8')).not.toMatch(/node_modules\/tweetnacl/);
  });

  test('an apply by the bundle loads neither tty, readline nor fs/promises, which a host would hold for as long as it runs', async () => {
    const cwd = await emptyFolder('bundle-builtins');
    await fs.copyFile(outcome.bundle.file, path.join(cwd, 'nox-mesh-host.cjs'));
    await fs.mkdir(path.join(cwd, 'root'));
    const probe = path.join(cwd, 'probe.cjs');
    await fs.writeFile(probe, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(path.join(cwd, 'loaded.json'))}, JSON.stringify(process.moduleLoadList)));\n`);
    // As the launcher starts it: the input is /dev/null, the output a pipe.
    const run = spawnSync(process.execPath, ['-r', probe, 'nox-mesh-host.cjs', 'apply', MOTD, '--root', 'root'], { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { PATH: process.env.PATH } });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const loaded = JSON.parse(await fs.readFile(path.join(cwd, 'loaded.json'), 'utf8')) as string[];
    expect(loaded).toContain('NativeModule fs'); // the probe saw the host's modules
    expect(loaded.filter((name) => /^NativeModule (tty|internal\/tty|fs\/promises|internal\/fs\/promises|internal\/fs\/streams|internal\/readline\/.*)$/.test(name))).toEqual([]);
  });

  test('puts zod\'s methods on its prototypes as they are, in both of zod\'s builds, and they work on the schema', async () => {
    const dir = await emptyFolder('bundle-zod-methods');
    const body = `
      const schema = z.object({ mode: z.string().regex(/^0[0-7]{3}$/) });
      const optional = schema.optional();
      const parsed = optional.parse({ mode: '0644' });
      const failed = schema.safeParse({ mode: '644' });
      const found = (key) => { for (let at = schema; at; at = Object.getPrototypeOf(at)) { const d = Object.getOwnPropertyDescriptor(at, key); if (d) return d; } };
      process.stdout.write(JSON.stringify({ parsed, failed: failed.success, absent: optional.parse(undefined) === undefined,
        own: ['optional', 'parse', 'safeParse'].filter((key) => Object.prototype.hasOwnProperty.call(schema, key)),
        data: ['optional', 'parse', 'safeParse'].every((key) => typeof found(key).value === 'function' && found(key).get === undefined) }));
    `;
    // What the host's code reaches (import: zod's ES build) and what a require reaches (its CommonJS one).
    for (const [name, load] of [['import', "import * as z from 'zod';"], ['require', "const z = require('zod');"]]) {
      const file = path.join(dir, `zod-${name}.cjs`);
      await bundleHost({ outFile: file, version, entry: `${load}\n${body}` });
      const bundled = await runIn(dir, [process.execPath, file], { PATH: process.env.PATH });
      expect(bundled.stderr).toBe('');
      expect(JSON.parse(bundled.stdout)).toEqual({ parsed: { mode: '0644' }, failed: false, absent: true, own: [], data: true });
    }
  });

  test('refuses a zod whose method installer is not the one it replaces, saying what to change', async () => {
    const dir = await emptyFolder('bundle-other-zod');
    const util = path.join(dir, 'node_modules', 'zod', 'v4', 'core', 'util.js');
    await fs.mkdir(path.dirname(util), { recursive: true });
    await fs.writeFile(util, 'export function defineBound(proto, key, fn) { proto[key] = fn; }\n');
    const failure = await build({ stdin: { contents: `require(${JSON.stringify(util)});`, resolveDir: dir, loader: 'js' }, bundle: true, platform: 'node', write: false, logLevel: 'silent', plugins: [zodMethodsOnPrototypes] }).catch((error: unknown) => error);
    expect(String((failure as Error).message)).toMatch(/no longer installs zod's methods as scripts\/build-host\.ts expects .*update ZOD_BOUND_METHOD/);
  });

  test('refuses a bundle that would contain the controller store, naming who imported it', async () => {
    const failure = await bundleHost({
      outFile: path.join(scratch, 'refused.cjs'),
      version,
      entry: "require('pg');\n",
    }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ControllerCodeInHostBundle);
    expect((failure as Error).message).toMatch(/^the host bundle would contain the controller's store \(pg(, [a-z0-9-]+)*\), imported by nox-mesh-host-entry\.js;/);
    await expect(fs.access(path.join(scratch, 'refused.cjs'))).rejects.toThrow();
  });

  test('the bundle runs version, profile and apply from an empty folder with no node_modules', async () => {
    const cwd = await emptyFolder('bundle-run');
    await fs.copyFile(outcome.bundle.file, path.join(cwd, 'nox-mesh-host.cjs'));

    const seen = await exercise(cwd, [process.execPath, 'nox-mesh-host.cjs'], { PATH: process.env.PATH, NODE_PATH: '' });

    expect(seen).toEqual({
      version: { code: 0, stdout: `nox-mesh-host ${version}\n`, stderr: '' },
      profile: { code: 0, arch: 'x86_64' },
      apply: { code: 0, stderr: '' },
      motd: 'This machine is managed by Novox Mesh.\n',
      stamped: true,
      // The bundle belongs to no package: it records its program version for the launcher.
      knownGood: `${version}\n`,
    });
  });

  test('the cached start runs the bundle with the code cache the build made, and does what the bundle does', async () => {
    const cwd = await emptyFolder('cached-run');
    const cache = outcome.bundle.codeCache!;
    for (const file of [outcome.bundle.file, cache.file, cache.launcher]) await fs.copyFile(file, path.join(cwd, path.basename(file)));
    const env = { PATH: process.env.PATH, NODE_PATH: '', NOX_MESH_HOST_SAY_CODE_CACHE: '1' };

    const seen = await exercise(cwd, [process.execPath, CACHED_START_FILE], env);

    expect(seen).toEqual({
      version: { code: 0, stdout: `nox-mesh-host ${version}\n`, stderr: 'code cache: used\n' },
      profile: { code: 0, arch: 'x86_64' },
      apply: { code: 0, stderr: 'code cache: used\n' },
      motd: 'This machine is managed by Novox Mesh.\n',
      stamped: true,
      knownGood: `${version}\n`,
    });
  });

  test('the cached start ignores a cache of another bundle, or one others may write, and still runs the bundle', async () => {
    const cwd = await emptyFolder('cached-stale');
    const cache = outcome.bundle.codeCache!;
    await fs.copyFile(cache.launcher, path.join(cwd, CACHED_START_FILE));
    await fs.copyFile(cache.file, path.join(cwd, CODE_CACHE_FILE));
    // The same bundle saying another version of the same length: V8 alone would take the cache.
    const other = version.replace(/.$/, (last) => String((Number(last) + 1) % 10));
    const text = await fs.readFile(outcome.bundle.file, 'utf8');
    await fs.writeFile(path.join(cwd, 'nox-mesh-host.cjs'), text.split(`"${version}"`).join(`"${other}"`));
    const env = { PATH: process.env.PATH, NODE_PATH: '', NOX_MESH_HOST_SAY_CODE_CACHE: '1' };

    const stale = await runIn(cwd, [process.execPath, CACHED_START_FILE, 'version'], env);
    await fs.copyFile(outcome.bundle.file, path.join(cwd, 'nox-mesh-host.cjs'));
    await fs.chmod(path.join(cwd, CODE_CACHE_FILE), 0o666);
    const open = await runIn(cwd, [process.execPath, CACHED_START_FILE, 'version'], env);

    expect(stale).toEqual({ code: 0, stdout: `nox-mesh-host ${other}\n`, stderr: 'code cache: not used: made from another bundle\n' });
    expect(open).toEqual({ code: 0, stdout: `nox-mesh-host ${version}\n`, stderr: 'code cache: not used: writable by others (mode 666)\n' });
  });

  test('keeps libsodium out of the bundle, in a file beside it that the executable carries as an asset', async () => {
    expect(outcome.bundle.packages).not.toContain('libsodium-wrappers');
    expect(outcome.bundle.libsodium.file).toBe(path.join(scratch, 'dist', LIBSODIUM_FILE));
    // Its WebAssembly is base64 text that begins with the module's magic number, `\0asm`.
    expect((await fs.readFile(outcome.bundle.file, 'utf8')).includes('AGFzbQ')).toBe(false);
    expect((await fs.readFile(outcome.bundle.libsodium.file, 'utf8')).includes('AGFzbQ')).toBe(true);
  });

  // An enrolled node holding a declaration of one file whose content is a secret sealed to it:
  // `reconcile` opens the box, which is when the host first needs libsodium.
  async function holdingASealedSecret(name: string): Promise<string> {
    await ready();
    const cwd = await emptyFolder(name);
    const identity = generateNodeIdentity();
    const resources: Resource[] = [{ shape: 'file', path: '/etc/app/db-password', content: { sealed: { secret: 'app/db-password', version: 1, box: sealToNode('s3cret\n', identity.public_key) } }, mode: '0600', owner: 'root', group: 'root' }];
    await new HostStore(path.join(cwd, 'root', 'var', 'lib', 'mesh-host')).save(enrolledState({ node: 'web-1', identity, controller: generateSigningKeyPair(), brokerUrl: 'tls://127.0.0.1:1', brokerFingerprint: '0'.repeat(64), resources }));
    return cwd;
  }
  const opened = (cwd: string) => fs.readFile(path.join(cwd, 'root', 'etc', 'app', 'db-password'), 'utf8').catch(() => null);

  test('the single executable opens a sealed secret with the libsodium it carries, from an empty folder with no Node on PATH', async () => {
    const cwd = await holdingASealedSecret('sea-sealed');
    await exec('tar', ['-xzf', outcome.tarballs[0]!.file, '-C', cwd]);

    const run = await runIn(cwd, [path.join(cwd, 'nox-mesh-host'), 'reconcile', '--root', 'root'], { PATH: await pathWithoutNode() });

    expect({ code: run.code, stderr: run.stderr, secret: await opened(cwd) }).toEqual({ code: 0, stderr: '', secret: 's3cret\n' });
  });

  test('the bundle opens a sealed secret with the libsodium file beside it, and without it says what is missing and what to do', async () => {
    const env = { PATH: process.env.PATH, NODE_PATH: '' };
    const beside = await holdingASealedSecret('bundle-sealed');
    await fs.copyFile(outcome.bundle.file, path.join(beside, 'nox-mesh-host.cjs'));
    await fs.copyFile(outcome.bundle.libsodium.file, path.join(beside, LIBSODIUM_FILE));
    const alone = await holdingASealedSecret('bundle-sealed-alone');
    await fs.copyFile(outcome.bundle.file, path.join(alone, 'nox-mesh-host.cjs'));

    const withFile = await runIn(beside, [process.execPath, 'nox-mesh-host.cjs', 'reconcile', '--root', 'root'], env);
    const without = await runIn(alone, [process.execPath, 'nox-mesh-host.cjs', 'reconcile', '--root', 'root', '--json'], env);

    expect({ code: withFile.code, stderr: withFile.stderr, secret: await opened(beside) }).toEqual({ code: 0, stderr: '', secret: 's3cret\n' });
    expect(without.code).toBe(1);
    expect(without.stdout).toMatch(/libsodium, which opens sealed secrets, is not at \S*nox-mesh-host-libsodium\.cjs; next: install the host again/);
    expect(await opened(alone)).toBeNull();
  });

  test('makes a Debian and an Arch tarball of the same executable, and skips Alpine saying why', () => {
    expect(outcome.tarballs.map((tarball) => [tarball.system, path.basename(tarball.file), tarball.sameAs])).toEqual([
      ['debian', tarballName('debian', version), undefined],
      ['arch', tarballName('arch', version), 'debian'],
    ]);
    expect(outcome.skipped).toEqual([{ system: 'alpine', reason: expect.stringMatching(/linked against glibc, and alpine needs a Node linked against musl, which the npm registry does not carry: give one with --node alpine=PATH/) }]);
  });

  test('the tarball holds the executable, the launcher and the rouse helper, flat, executable and owned by root', async () => {
    const { stdout } = await exec('tar', ['-tvzf', outcome.tarballs[0]!.file]);
    const members = stdout.trim().split('\n').map((line) => {
      const [mode, owner, , , , name] = line.split(/\s+/);
      return `${mode} ${owner} ${name}`;
    });

    expect(members).toEqual(['-rwxr-xr-x 0/0 nox-mesh-host', '-rwxr-xr-x 0/0 nox-mesh-host-launch', '-rwxr-xr-x 0/0 nox-mesh-host-rouse']);
  });

  test('the single executable runs version, profile and apply from an empty folder with no Node on PATH', async () => {
    const cwd = await emptyFolder('sea-run');
    await exec('tar', ['-xzf', outcome.tarballs[0]!.file, '-C', cwd]);

    const seen = await exercise(cwd, [path.join(cwd, 'nox-mesh-host')], { PATH: await pathWithoutNode() });

    expect(seen).toEqual({
      version: { code: 0, stdout: `nox-mesh-host ${version}\n`, stderr: '' },
      profile: { code: 0, arch: 'x86_64' },
      apply: { code: 0, stderr: '' },
      motd: 'This machine is managed by Novox Mesh.\n',
      stamped: true,
      // The package version baked into the Debian executable: what the launcher rolls back to.
      knownGood: `${packageVersionFor('debian', version)}\n`,
    });
  });

  test('the single executable starts its bundle with the code cache it carries, and `run` starts without it', async () => {
    const cwd = await emptyFolder('sea-cache');
    await exec('tar', ['-xzf', outcome.tarballs[0]!.file, '-C', cwd]);
    const env = { PATH: await pathWithoutNode(), NOX_MESH_HOST_SAY_CODE_CACHE: '1' };

    const oneShot = await runIn(cwd, [path.join(cwd, 'nox-mesh-host'), 'version'], env);
    const daemon = await runIn(cwd, [path.join(cwd, 'nox-mesh-host'), 'run', '--help'], env);

    // "used" is said only when V8 took the data: made by another Node or from another bundle, it says why not.
    expect([oneShot.code, oneShot.stderr]).toEqual([0, 'code cache: used\n']);
    expect([daemon.code, daemon.stderr]).toEqual([0, 'code cache: not used: `run` starts without it\n']);
  });

  test('the single executable carries the pinned LTS runtime, not the Node that built it, and says so in version --json', async () => {
    const cwd = await emptyFolder('sea-runtime');
    await exec('tar', ['-xzf', outcome.tarballs[0]!.file, '-C', cwd]);

    const { stdout } = await exec(path.join(cwd, 'nox-mesh-host'), ['version', '--json'], { cwd, env: { PATH: await pathWithoutNode() } });

    expect(JSON.parse(stdout)).toEqual({ program: 'nox-mesh-host', version, node: `v${HOST_RUNTIME_VERSION}` });
    expect(`v${HOST_RUNTIME_VERSION}`).not.toBe(process.version);
  });

  test('refuses to build an Alpine executable on a Node linked against glibc when Alpine is asked for', async () => {
    await expect(buildHost({ outDir: path.join(scratch, 'alpine'), systems: ['alpine'] }))
      .rejects.toThrow(/^cannot build the alpine executable: .* is linked against glibc, and alpine needs a Node linked against musl/);
  });

  test('reads the architecture and C library of a Node binary from its ELF headers', async () => {
    expect(await inspectNodeBinary(process.execPath)).toEqual({ arch: 'x86_64', libc: 'glibc' });
    await expect(inspectNodeBinary(MOTD)).rejects.toThrow(/is not a 64-bit little-endian ELF executable/);
  });
});

describe('packageVersionFor', () => {
  test("writes each system's package release the way its package manager does", () => {
    expect(['debian', 'arch', 'alpine'].map((system) => packageVersionFor(system as 'debian', '0.4.2', 2))).toEqual(['0.4.2-2', '0.4.2-2', '0.4.2-r1']);
  });
});

describe('escapeNonAscii', () => {
  test('writes what esbuild leaves outside ASCII as escapes that mean the same', () => {
    const source = "/* an actor’s snapshot — */ module.exports = { unit: /^(ns|µs|ms)$/, faces: /^😀+$/u, text: 'µs — 😀' };";
    const run = (code: string) => {
      const module = { exports: {} as { unit: RegExp; faces: RegExp; text: string } };
      vm.runInNewContext(code, { module });
      return module.exports;
    };

    const escaped = escapeNonAscii(source);
    const exported = run(escaped);

    expect(escaped.match(/[\u0080-\uffff]/g) ?? []).toEqual([]);
    expect([exported.unit.test('µs'), exported.unit.test('us'), exported.faces.test('😀😀'), exported.faces.test('😀x')]).toEqual([true, false, true, false]);
    expect(exported.text).toBe(run(source).text);
  });

  test('refuses a line of code where the character may be in a tagged template\'s raw text, and escapes comments', () => {
    expect(() => escapeNonAscii('const a = 1;\nconst unit = String.raw`µs`;\n')).toThrow(/^line 2 of the bundle has a character outside ASCII beside a template literal/);
    expect(escapeNonAscii('  // `version` — the program\n  * `run` — the host\n')).toBe('  // `version` \\u2014 the program\n  * `run` \\u2014 the host\n');
  });
});
