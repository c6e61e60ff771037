import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../schema/host-state';
import { buildDeb } from '../actors/host/appliers/package/testing/build-deb';
import { makeDpkgRoot } from '../actors/host/appliers/package/testing/dpkg-root';
import { writeFlatAptIndex } from '../actors/host/appliers/package/testing/flat-apt-repository';
import { runTool } from '../actors/host/appliers/package/testing/run-tool';
import { RESTART_DUE_FILE } from '../actors/host/launch-state/restart-due';
import { FakeController, type ReportTap } from '../actors/host/link/testing/fake-controller';
import { HostStore } from '../actors/host/store/host-store';
import { generateNodeIdentity, ready } from '../actors/shared/crypto';
import { startTestBroker, type TestBroker } from '../tests/broker/test-broker';
import { runningVersion } from '../actors/shared/version';
import { buildDebianPackage } from '../scripts/build-packages';
import { standInTarball } from './testing/stand-in-releases';

// Seed 000, "The restart", end to end: an enrolled `nox-mesh-host run` (from the checkout) is
// declared its own package at a new version. The real apt-get installs it into the machine's
// root, the host runs the new binary's `version`, finishes the pass, reports, and exits 0 for the
// launcher to start the new binary. Run again (as the launcher would), the host does not take
// the flag that version left as its own: it stays up. A real nats-server carries it all.

const repo = path.resolve(__dirname, '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');
const NODE = 'upgrading';

let broker: TestBroker;
let controller: FakeController;
let scratch: string;
let root: string;
let stateDir: string;
let reports: ReportTap;
const started: ChildProcess[] = [];

beforeAll(async () => {
  await ready();
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'self-upgrade-'));
  const aptRepository = path.join(scratch, 'apt');
  await buildDebianPackage({ tarball: await standInTarball(scratch, '0.2.0'), version: '0.2.0', release: 1, outDir: aptRepository, fast: true });
  for (const [name, version] of [['libc6', '2.36-9'], ['libgcc-s1', '12.2.0-14'], ['libstdc++6', '12.2.0-14']] as const) {
    await buildDeb(aptRepository, { name, version });
  }
  await writeFlatAptIndex(aptRepository);
  root = path.join(scratch, 'root');
  await makeDpkgRoot(root, { aptRepository });

  broker = await startTestBroker({ dirPrefix: 'self-upgrade test-broker' });
  controller = await FakeController.start(broker);
  stateDir = path.join(root, 'var/lib/mesh-host');
  const identity = generateNodeIdentity();
  await new HostStore(stateDir).save({
    ...emptyHostState(),
    identity: { node: NODE, ...identity },
    pins: { broker_url: broker.url, broker_fingerprint: broker.fingerprint, controller_public_key: controller.key.public_key },
  });
  await controller.admitNode(NODE, identity.nkey_public);
  reports = controller.reports(NODE);
}, 60_000);

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await controller?.stop();
  await broker?.stop();
  await fs.rm(scratch, { recursive: true, force: true });
});

/** `nox-mesh-host run` over the machine, its output kept. */
function runHost(): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [bin, 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  return { child, output: () => output, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

describe("the host upgrading itself through its own package", () => {
  test('installs the new version, checks it runs, reports the pass, and exits 0 for the launcher to start it', async () => {
    await controller.declare({
      node: NODE, epoch: 1, generation: 1, kind: 'full', issued_at: '2026-08-27T14:02:00Z',
      resources: [
        { shape: 'package', name: 'nox-mesh-host', version: '0.2.0-1' },
        { shape: 'file', path: '/etc/motd', content: { text: 'upgraded\n' }, mode: '0644', owner: 'root', group: 'root' },
      ],
    });
    const host = runHost();

    const report = await reports.next((r) => r.generation === 1 && r.results.length > 0, 30_000);
    const code = await host.exited;

    expect(report.results.map((result) => [result.key, result.outcome])).toEqual([
      ['package:nox-mesh-host', 'applied'],
      ['file:/etc/motd', 'applied'],
    ]);
    // The report is sent by the host that is running, before it exits: the old version.
    expect(report.version_running).toBe(runningVersion());
    expect(code).toBe(0);
    expect(host.output()).toContain('installed nox-mesh-host 0.2.0, package 0.2.0-1: exiting 0 so the launcher starts the new version');
    expect(await runTool(['dpkg-query', `--admindir=${path.join(root, 'var/lib/dpkg')}`, '-W', '-f', '${Version}', 'nox-mesh-host'])).toBe('0.2.0-1');
    // The pass completed, so the running version is known to be good and the counter is cleared.
    expect(await fs.readFile(path.join(stateDir, 'launch', 'known-good'), 'utf8')).toBe(`${runningVersion()}\n`);
  }, 60_000);

  test('started again, the host clears the flag the upgrade left and stays up after its pass', async () => {
    const before = reports.received.length;
    const host = runHost();

    const report = await reports.next((r) => reports.received.indexOf(r) >= before, 30_000);
    expect(report.results.map((result) => result.outcome)).toEqual(['unchanged', 'unchanged']);
    await expect(fs.access(path.join(stateDir, RESTART_DUE_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    // Still running a moment after its report: nothing told it to restart.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(host.child.exitCode).toBeNull();

    host.child.kill('SIGTERM');
    expect(await host.exited).toBe(0);
  }, 60_000);
});
