import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { version } from '../package.json';
import type { ApplyContext } from '../actors/host/appliers/applier';
import { DpkgBackend } from '../actors/host/appliers/package/dpkg.backend';
import { packageApplier } from '../actors/host/appliers/package/package.applier';
import { buildDeb } from '../actors/host/appliers/package/testing/build-deb';
import { makeDpkgRoot } from '../actors/host/appliers/package/testing/dpkg-root';
import { writeFlatAptIndex } from '../actors/host/appliers/package/testing/flat-apt-repository';
import { bashOffersFirstWord, fishOffers, manRenders } from './testing/installed-docs';
import { runTool } from '../actors/host/appliers/package/testing/run-tool';
import { freePort } from '../actors/shared/testing/free-port';
import { ProcessRunner } from '../actors/shared/process/command-runner';
import { RigProcess } from '../e2e/rig-process';
import { runCli, type CliResult } from '../e2e/run-cli';
import { done, notYet, until } from '../e2e/until';
import { buildControllerPackage, CONTROLLER_PACKAGING } from '../scripts/build-controller';

// The controller's Debian package, built by scripts/build-controller.ts, installed into a
// temporary root by the real apt-get and dpkg through the host's package applier (as the host's
// own package is, packaging/host-package.test.ts), and then run from what it installed: no file
// of this checkout is used. The broker and the controller are started with the command lines of
// the installed systemd units (there is no booted systemd here to start them), on a mesh the
// installed `mesh-control init` made. The units themselves are read by the real
// systemd-analyze and systemctl; the OpenRC scripts by a real shell, as openrc-run sources them.

const exec = promisify(execFile);
const MESH_DIR = '/var/lib/mesh-control';
const UNITS = ['mesh-control-broker.service', 'mesh-control.service'] as const;
const SYSTEM_UNITS = '/usr/lib/systemd/system';

let scratch: string;
let deb: string;
let root: string;
const started: RigProcess[] = [];

beforeAll(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'controller-package-'));
  const apt = path.join(scratch, 'apt');
  deb = await buildControllerPackage({ version, release: 1, outDir: apt, fast: true });
  // What the package depends on, as stand-ins with no files: what they carry is this machine's own node and nats-server.
  await buildDeb(apt, { name: 'nodejs', version: '20.19.2' });
  await buildDeb(apt, { name: 'nats-server', version: '2.9.10' });
  await writeFlatAptIndex(apt);
  root = path.join(scratch, 'root');
  await makeDpkgRoot(root, { aptRepository: apt });
  const ctx: ApplyContext = { root, stateDir: path.join(scratch, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host' };
  await fs.mkdir(ctx.stateDir);
  await packageApplier(new DpkgBackend()).apply({ shape: 'package', name: 'mesh-control' }, ctx);
}, 180_000);

afterAll(async () => {
  for (const process of started.reverse()) await process.stop();
  await fs.rm(scratch, { recursive: true, force: true });
}, 60_000);

/** The installed mesh-control, run from outside any checkout, on the root's mesh directory. */
function installedControl(args: readonly string[], timeoutMs = 60_000): Promise<CliResult> {
  return runCli([path.join(root, 'usr/bin/mesh-control'), ...args, '--dir', path.join(root, MESH_DIR)], { cwd: '/', timeoutMs, label: `mesh-control ${args.join(' ')}` });
}

/** The ExecStart of an installed unit, its paths moved into the root where the package and the mesh are. */
async function execStartOf(unit: string): Promise<[string, ...string[]]> {
  const text = await fs.readFile(path.join(root, SYSTEM_UNITS, unit), 'utf8');
  const line = /^ExecStart=(.*)$/m.exec(text)?.[1];
  if (line === undefined) throw new Error(`${unit} has no ExecStart`);
  const argv = line.split(/\s+/).map((word) => (word.startsWith(MESH_DIR) || word === '/usr/bin/mesh-control' ? path.join(root, word) : word));
  return argv as [string, ...string[]];
}

describe("the controller's Debian package", () => {
  test('installs with apt-get as mesh-control, depending on node and nats-server, every file matching its md5sums', async () => {
    const said = await runTool(['dpkg-query', `--admindir=${path.join(root, 'var/lib/dpkg')}`, '-W', '-f', '${Version} ${db:Status-Status} ${Depends}', 'mesh-control']);
    const files = (await runTool(['dpkg-deb', '--contents', deb])).trim().split('\n').map((line) => line.split(/\s+/).slice(5).join(' ').replace(/^\.\//, ''));
    // dpkg --verify checks every installed file against the package's md5sums, and prints what differs.
    const verify = await exec('dpkg', [`--root=${root}`, '--verify', 'mesh-control']);

    expect(said).toBe(`${version}-1 installed nodejs (>= 20), nats-server (>= 2.9)`);
    expect(files).toEqual(expect.arrayContaining([
      'usr/bin/mesh-control',
      'usr/lib/mesh-control/mesh-control.cjs',
      'usr/lib/mesh-control/migrations/0001_nodes.sql',
      'usr/lib/mesh-control/node_modules/@electric-sql/pglite/package.json',
      'usr/lib/systemd/system/mesh-control.service',
      'usr/lib/systemd/system/mesh-control-broker.service',
      'usr/share/doc/mesh-control/copyright',
      'usr/share/man/man1/mesh-control.1.gz',
      'usr/share/bash-completion/completions/mesh-control',
      'usr/share/fish/vendor_completions.d/mesh-control.fish',
    ]));
    expect(verify).toEqual({ stdout: '', stderr: '' });
  });

  test('carries its manual page, as man renders it, and bash and fish completions that offer its verbs', async () => {
    const page = manRenders(path.join(root, 'usr/share/man/man1/mesh-control.1.gz'));

    expect(page).toMatch(/^NAME\n +mesh-control - /m);
    expect(page).toMatch(/^ +mesh-control token issue\b/m);
    expect(bashOffersFirstWord(path.join(root, 'usr/share/bash-completion/completions/mesh-control'), 'mesh-control', 'do')).toEqual(['doctor']);
    expect(fishOffers(path.join(root, 'usr/share/fish/vendor_completions.d/mesh-control.fish'), 'mesh-control han', scratch)).toEqual(['hand-act', 'hand-acts']);
  });

  test('a changed file is what dpkg --verify then reports, so the md5sums are really checked', async () => {
    const copyright = path.join(root, 'usr/share/doc/mesh-control/copyright');
    const original = await fs.readFile(copyright);
    await fs.appendFile(copyright, 'changed\n');
    try {
      // dpkg --verify exits 0 either way; the 5 in the third column says the md5sum differs.
      expect(await exec('dpkg', [`--root=${root}`, '--verify', 'mesh-control'])).toEqual({ stdout: '??5??????   /usr/share/doc/mesh-control/copyright\n', stderr: '' });
    } finally {
      await fs.writeFile(copyright, original);
    }
  });

  test('the installed mesh-control runs from its package, not a checkout: its version, a mesh on the embedded store, then the broker and the controller started by their units\' command lines', async () => {
    const port = await freePort();

    const versionSaid = await runCli([path.join(root, 'usr/bin/mesh-control'), '--version'], { cwd: '/' });
    const init = await installedControl(['init', '--broker-url', `tls://127.0.0.1:${port}`], 180_000);

    expect(versionSaid).toMatchObject({ code: 0, stdout: `${version}\n` });
    expect(init).toMatchObject({ code: 0 });
    expect(init.stdout).toMatch(/store +embedded \(PGlite\) in .*; \d+ migrations applied/);

    const broker = new RigProcess({ label: 'broker', argv: await execStartOf('mesh-control-broker.service'), cwd: '/', logFile: path.join(scratch, 'broker.log') });
    started.push(broker);
    const serve = new RigProcess({ label: 'serve', argv: await execStartOf('mesh-control.service'), cwd: '/', logFile: path.join(scratch, 'serve.log') });
    started.push(serve);
    const nodes = await until('the packaged controller to answer mesh-control nodes', async () => {
      if (!serve.running) throw new Error(`mesh-control serve ended:\n${serve.output()}`);
      const answer = await installedControl(['nodes', '--json']);
      return answer.code === 0 ? done(JSON.parse(answer.stdout) as { nodes: unknown[] }) : notYet(`${answer.stderr}\n${serve.output()}`);
    }, { timeoutMs: 90_000, intervalMs: 500 });

    expect(nodes).toEqual({ nodes: [] });
    expect(serve.output()).toContain(`broker tls://127.0.0.1:${port}`);
  }, 300_000);
});

describe("the controller's systemd units", () => {
  let unitRoot: string;

  beforeAll(async () => {
    // A machine with the package installed, the targets systemd ships, and the programs the
    // units run from other packages (nats-server, kill) as stand-ins of the same name.
    unitRoot = path.join(scratch, 'unit-root');
    await fs.mkdir(path.join(unitRoot, SYSTEM_UNITS), { recursive: true });
    for (const name of await fs.readdir(SYSTEM_UNITS)) {
      if (name.endsWith('.target')) await fs.copyFile(path.join(SYSTEM_UNITS, name), path.join(unitRoot, SYSTEM_UNITS, name));
    }
    for (const unit of UNITS) await fs.copyFile(path.join(root, SYSTEM_UNITS, unit), path.join(unitRoot, SYSTEM_UNITS, unit));
    for (const program of ['/usr/bin/mesh-control', '/usr/sbin/nats-server', '/bin/kill']) {
      await fs.mkdir(path.join(unitRoot, path.dirname(program)), { recursive: true });
      await fs.writeFile(path.join(unitRoot, program), '#!/bin/sh\n', { mode: 0o755 });
    }
  });

  test('pass systemd-analyze verify with no warning', async () => {
    const said = await exec('systemd-analyze', ['verify', `--root=${unitRoot}`, ...UNITS.map((unit) => path.join(SYSTEM_UNITS, unit))]);

    expect(said).toEqual({ stdout: '', stderr: '' });
  });

  test('fail systemd-analyze verify when nats-server is not where the broker unit runs it from', async () => {
    await fs.rename(path.join(unitRoot, 'usr/sbin/nats-server'), path.join(unitRoot, 'usr/sbin/nats-server.away'));
    try {
      await expect(exec('systemd-analyze', ['verify', `--root=${unitRoot}`, path.join(SYSTEM_UNITS, 'mesh-control-broker.service')]))
        .rejects.toMatchObject({ stderr: expect.stringContaining('/usr/sbin/nats-server is not executable') });
    } finally {
      await fs.rename(path.join(unitRoot, 'usr/sbin/nats-server.away'), path.join(unitRoot, 'usr/sbin/nats-server'));
    }
  });

  test('are enabled by systemctl into multi-user.target, the controller wanting the broker', async () => {
    await exec('systemctl', [`--root=${unitRoot}`, 'enable', ...UNITS]);

    for (const unit of UNITS) expect(await fs.readlink(path.join(unitRoot, 'etc/systemd/system/multi-user.target.wants', unit))).toBe(path.join(SYSTEM_UNITS, unit));
    expect(await fs.readFile(path.join(unitRoot, SYSTEM_UNITS, 'mesh-control.service'), 'utf8')).toMatch(/^Wants=.*mesh-control-broker\.service$/m);
  });
});

describe("the controller's OpenRC scripts", () => {
  /** Sources `file` in sh as openrc-run does, runs `script` after it, and returns what it printed (and its status). */
  async function sourced(file: string, script: string): Promise<{ stdout: string; code: number }> {
    try {
      const { stdout } = await exec('sh', ['-c', `. "$1"\n${script}`, 'sh', file], { env: { PATH: process.env.PATH } });
      return { stdout, code: 0 };
    } catch (error) {
      const failed = error as { stdout: string; code: number };
      return { stdout: failed.stdout, code: failed.code };
    }
  }

  test.each([
    ['mesh-control-broker.openrc', '/usr/sbin/nats-server|-c /var/lib/mesh-control/broker/nats-server.conf', 'need net\nafter firewall\n'],
    ['mesh-control.openrc', '/usr/bin/mesh-control|serve --dir /var/lib/mesh-control', 'need net mesh-control-broker\n'],
  ])('%s runs what the systemd unit runs, under supervise-daemon, respawned without giving up', async (name, command, depends) => {
    const file = path.join(CONTROLLER_PACKAGING, name);
    const unit = name.replace('.openrc', '.service');
    const execStart = /^ExecStart=(.*)$/m.exec(await fs.readFile(path.join(CONTROLLER_PACKAGING, unit), 'utf8'))?.[1];

    const said = await sourced(file, 'need() { echo "need $*"; }\nafter() { echo "after $*"; }\nprintf "%s|%s|%s|%s|%s\\n" "$supervisor" "$command" "$command_args" "$respawn_delay" "$respawn_max"\ndepend');

    expect((await fs.readFile(file, 'utf8')).split('\n')[0]).toBe('#!/sbin/openrc-run');
    expect(said).toEqual({ stdout: `supervise-daemon|${command}|5|0\n${depends}`, code: 0 });
    expect(command.replace('|', ' ')).toBe(execStart);
  });

  test.each(['mesh-control-broker.openrc', 'mesh-control.openrc'])('%s refuses to start before the mesh is made, naming mesh-control init', async (name) => {
    // This machine has no mesh in /var/lib/mesh-control (the test refuses to run where one is).
    await expect(fs.access(path.join(MESH_DIR, 'mesh.json'))).rejects.toThrow();

    const said = await sourced(path.join(CONTROLLER_PACKAGING, name), 'checkpath() { echo "checkpath $*"; }\neerror() { echo "eerror $*"; }\nstart_pre');

    expect(said).toEqual({ stdout: expect.stringMatching(/^checkpath --directory --mode 0700 \/var\/lib\/mesh-control\neerror no .* make (it|the mesh) with mesh-control init --dir \/var\/lib\/mesh-control\n$/), code: 1 });
  });
});

// Last: it takes the package away from the root the tests above use.
describe("removing the controller's package", () => {
  test('disables both units in the root, removes its files, and keeps the mesh directory with its keys', async () => {
    await exec('systemctl', [`--root=${root}`, 'enable', ...UNITS]);
    const wants = path.join(root, 'etc/systemd/system/multi-user.target.wants');
    expect((await fs.readdir(wants)).sort()).toEqual([...UNITS].sort());

    await exec('dpkg', [`--root=${root}`, '--force-script-chrootless', '--remove', 'mesh-control'], { env: { ...process.env, PATH: process.env.PATH } });

    expect(await fs.readdir(wants).catch(() => [])).toEqual([]);
    await expect(fs.access(path.join(root, 'usr/bin/mesh-control'))).rejects.toThrow();
    await expect(fs.access(path.join(root, MESH_DIR, 'mesh.json'))).resolves.toBeUndefined();
  });
});
