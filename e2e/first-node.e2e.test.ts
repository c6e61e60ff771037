import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IssuedToken } from '../actors/controller/tokens/issue-enrolment-token';
import type { NodeListing } from '../actors/controller/nodes/list-nodes';
import { buildDeb } from '../actors/host/appliers/package/testing/build-deb';
import { makeDpkgRoot } from '../actors/host/appliers/package/testing/dpkg-root';
import { writeFlatAptIndex } from '../actors/host/appliers/package/testing/flat-apt-repository';
import type { Enrolled } from '../actors/host/enrolment/enrol';
import type { RaisedFoundation } from '../actors/host/foundation/raise-foundation';
import { freePort } from '../actors/shared/testing/free-port';
import { FoundationBundle } from '../schema/foundation-bundle';
import type { Owned } from '../schema/owned';
import { buildControllerPackage } from '../scripts/build-controller';
import { REPO_DIR } from './mesh-rig';
import { RigProcess } from './rig-process';
import { jsonOf, runCli, type CliResult } from './run-cli';
import { done, notYet, until } from './until';

// Seed 000, "hosted → enrolled: the first node": three commands on one machine, each its own
// real process. `nox-mesh-host reconcile --bundle` installs the controller's real Debian package
// (scripts/build-controller.ts) into the machine's root with the real apt-get and dpkg, makes
// the mesh with the installed `mesh-control init` (PGlite), and starts the broker (the machine's
// nats-server) and the installed controller as services. No init is booted here, so the
// services are run by the host's start-stop-daemon backend, as real background processes. Then
// the installed `mesh-control token issue`, `nox-mesh-host enrol`, and the node is shown to be
// like any other: it links, takes a declaration from the controller it raised, and the
// declaration leaves the broker and the controller running.
//
// What the root's apt installs besides the controller: stand-in `nodejs` and `nats-server`
// packages with no files (what they carry is this machine's own node and nats-server).

const HOST = path.join(REPO_DIR, 'bin', 'nox-mesh-host');
const MESH_DIR = path.join('var', 'lib', 'mesh-control');
const SERVICES = ['mesh-control-broker', 'mesh-control'] as const;

let scratch: string;
let aptRepository: string;
/** Every machine's root the tests made. */
const roots: string[] = [];

beforeAll(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'first-node-'));
  aptRepository = path.join(scratch, 'apt');
  await buildControllerPackage({ version: '0.1.0', release: 1, outDir: aptRepository, fast: true });
  await buildDeb(aptRepository, { name: 'nodejs', version: '20.19.2' });
  await buildDeb(aptRepository, { name: 'nats-server', version: '2.9.10' });
  await writeFlatAptIndex(aptRepository);
}, 120_000);

afterAll(async () => {
  // A test that went wrong may have raised services where it should not have: none outlives the run.
  for (const root of roots) await stopServices(root);
  if (process.env.MESH_E2E_KEEP === undefined) await fs.rm(scratch, { recursive: true, force: true });
}, 60_000);

/** Runs the checkout's `nox-mesh-host` verb on `root`. */
function host(root: string, args: readonly string[], timeoutMs = 60_000): Promise<CliResult> {
  return runCli([process.execPath, HOST, ...args, '--root', root], { cwd: REPO_DIR, timeoutMs, label: `nox-mesh-host ${args.join(' ')}` });
}

/** Runs the `mesh-control` the package installed in `root`, from outside any checkout. */
function installedControl(root: string, args: readonly string[]): Promise<CliResult> {
  return runCli([path.join(root, 'usr/bin/mesh-control'), ...args, '--dir', path.join(root, MESH_DIR)], { cwd: '/', label: `mesh-control ${args.join(' ')}` });
}

/** A new machine: a root whose hostname is `name`, with an empty dpkg database and the test's apt repository. */
async function machine(name: string): Promise<string> {
  const root = path.join(scratch, name);
  await fs.mkdir(path.join(root, 'etc'), { recursive: true });
  await fs.writeFile(path.join(root, 'etc/hostname'), `${name}\n`);
  await makeDpkgRoot(root, { aptRepository });
  roots.push(root);
  return root;
}

/** The pid of a service the start-stop-daemon backend started, when it is running as the program it should be. */
async function runningService(root: string, name: string): Promise<{ pid: number; cmdline: string } | undefined> {
  const text = await fs.readFile(path.join(root, 'run/mesh-host/services', `${name}.pid`), 'utf8').catch(() => undefined);
  const pid = Number(text?.trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  // Only a process that names this root is ours: a pid may have been given to anything since.
  return cmdline?.includes(root) === true ? { pid, cmdline: cmdline.split('\0').filter((arg) => arg !== '').join(' ') } : undefined;
}

/** Ends the services a test raised in `root`, whatever became of the test. */
async function stopServices(root: string): Promise<void> {
  for (const name of [...SERVICES].reverse()) {
    const service = await runningService(root, name);
    if (service === undefined) continue;
    process.kill(service.pid, 'SIGTERM');
    await until(`${name} to stop`, async () => ((await runningService(root, name)) === undefined ? done(true) : notYet(`pid ${service.pid}`)), { timeoutMs: 20_000 })
      .catch(() => process.kill(service.pid, 'SIGKILL'));
  }
}

describe('the first node', () => {
  let root: string;
  let run: RigProcess | undefined;

  afterAll(async () => {
    await run?.stop();
  }, 60_000);

  test('three commands on one machine raise a mesh and make the machine its first node, and then it is a node like any other', async () => {
    root = await machine('first');
    const port = await freePort();
    const bundleFile = path.join(scratch, 'first-node.json');
    const printed = await host(root, ['bundle', '--broker-url', `tls://127.0.0.1:${port}`]);
    FoundationBundle.parse(jsonOf<unknown>(printed));
    await fs.writeFile(bundleFile, printed.stdout);

    // 1: raise the foundation from the bundle.
    const raise = await host(root, ['reconcile', '--bundle', bundleFile, '--json'], 300_000);
    const raised = jsonOf<RaisedFoundation>(raise);
    expect(raised.results.map((result) => `${result.key} ${result.outcome}`)).toEqual([
      'package:mesh-control applied',
      'action:mesh-control-init applied',
      'file:/etc/mesh-host/services/mesh-control-broker.json applied',
      'file:/etc/mesh-host/services/mesh-control.json applied',
      'service:mesh-control-broker applied',
      'service:mesh-control applied',
    ]);
    const broker = await runningService(root, 'mesh-control-broker');
    const controller = await runningService(root, 'mesh-control');
    expect(broker?.cmdline).toBe(`/usr/sbin/nats-server -c ${path.join(root, MESH_DIR, 'broker/nats-server.conf')}`);
    // The controller runs from the package's files in the root, not from this checkout.
    expect(controller?.cmdline).toBe(`/usr/bin/node ${path.join(root, 'usr/lib/mesh-control/mesh-control.cjs')} serve --dir ${path.join(root, MESH_DIR)}`);
    // What the bundle raised is the machine's now: the host owns none of it.
    expect(jsonOf<Owned>(await host(root, ['owned', '--json'])).resources).toEqual([]);

    // 2: the controller it raised issues the first token (the installed mesh-control, asking the serving one).
    const token = await until('the raised controller to issue a token', async () => {
      const answer = await installedControl(root, ['token', 'issue', '--new', '--json']);
      return answer.code === 0 ? done(jsonOf<IssuedToken>(answer)) : notYet(`${answer.stderr}${answer.stdout}`);
    }, { timeoutMs: 60_000, intervalMs: 500 });

    // 3: the machine joins the mesh it raised.
    const enrolled = jsonOf<Enrolled>(await host(root, ['enrol', '--token', token.token, '--json']));
    expect(enrolled).toMatchObject({ node: 'first', broker_url: `tls://127.0.0.1:${port}`, replaced_node: null });

    // Not special: it links, and takes a declaration from its controller like any node.
    run = new RigProcess({ label: 'host first', argv: [process.execPath, HOST, 'run', '--root', root], cwd: REPO_DIR, logFile: path.join(scratch, 'host-first.log') });
    await run.waitFor(/^enrolled as node first/m, { timeoutMs: 30_000 });
    const declaration = path.join(scratch, 'declaration.json');
    await fs.writeFile(declaration, JSON.stringify({ resources: [{ shape: 'file', path: '/etc/first-node', content: { text: 'declared by the controller this node raised\n' } }] }));
    const declared = await installedControl(root, ['node', 'declare', 'first', declaration]);
    expect(declared).toMatchObject({ code: 0 });
    await until('the declared file on the first node', async () => {
      const text = await fs.readFile(path.join(root, 'etc/first-node'), 'utf8').catch(() => undefined);
      return text === undefined ? notYet(run?.output() ?? '') : done(text);
    }, { timeoutMs: 60_000 });
    const nodes = jsonOf<{ nodes: NodeListing[] }>(await installedControl(root, ['nodes', '--json'])).nodes;
    expect(nodes.map((node) => `${node.name} ${node.lifecycle_state}`)).toEqual(['first enrolled']);

    // The declaration names neither the broker nor the controller, and both still run, the same processes.
    expect(await runningService(root, 'mesh-control-broker')).toEqual(broker);
    expect(await runningService(root, 'mesh-control')).toEqual(controller);
    // It owns what its controller declared for it, as any node does (the overlay's files too), and nothing of the bundle.
    expect(jsonOf<Owned>(await host(root, ['owned', '--json'])).resources.map((owned) => owned.key).sort())
      .toEqual(['file:/etc/first-node', 'file:/etc/mesh/hosts', 'file:/etc/wireguard/mesh0.conf']);
  }, 600_000);

  test('a bundle given to a machine that is a node already is refused, naming the node and what to do', async () => {
    const answer = await host(root, ['reconcile', '--bundle', path.join(scratch, 'first-node.json'), '--json']);

    expect(answer.code).toBe(1);
    expect(JSON.parse(answer.stdout)).toMatchObject({
      error: { condition: 'FoundationOnEnrolledNode', what: expect.stringContaining('this machine is node first already'), next: expect.stringContaining('mesh-control node declare first FILE') },
    });
  });
});

describe('a machine that cannot be the first node', () => {
  test('an episodic host prints a bundle that says why, and refuses to raise a mesh from it or from any file, changing nothing', async () => {
    const root = await machine('phone');
    await fs.mkdir(path.join(root, 'system'));
    await fs.writeFile(path.join(root, 'system/build.prop'), 'ro.build.version.release=14\n');
    const residentBundle = path.join(scratch, 'resident.json');
    await fs.writeFile(residentBundle, JSON.stringify({ bundle: 'foundation', about: 'a mesh', resources: [{ shape: 'service', name: 'mesh-control', state: 'running', enabled: true }] }));

    const printed = FoundationBundle.parse(jsonOf<unknown>(await host(root, ['bundle'])));
    const carried = await host(root, ['reconcile']);
    const fromFile = await host(root, ['reconcile', '--bundle', residentBundle, '--json']);

    expect(printed).toEqual({ bundle: 'foundation', refused: expect.stringMatching(/^an episodic host cannot be the first node: /), next: expect.stringContaining('mesh-control token issue --new') });
    expect(carried.code).toBe(1);
    expect(carried.stderr).toContain('error: an episodic host cannot be the first node');
    expect(fromFile.code).toBe(1);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ error: { condition: 'FirstNodeRefused', value: residentBundle } });
    await expect(fs.access(path.join(root, 'var/lib/mesh-host/state.json'))).rejects.toThrow();
    await expect(fs.access(path.join(root, MESH_DIR))).rejects.toThrow();
  });

  test('a bundle file that is not one is refused whole, saying where and how to get a good one', async () => {
    const root = await machine('typo');
    const broken = path.join(scratch, 'broken.json');
    await fs.writeFile(broken, JSON.stringify({ bundle: 'foundation', about: 'a mesh', resources: [{ shape: 'service', name: 'mesh-control', state: 'up', enabled: true }] }));

    const answer = await host(root, ['reconcile', '--bundle', broken, '--json']);

    expect(answer.code).toBe(1);
    expect(JSON.parse(answer.stdout)).toMatchObject({ error: { condition: 'ContractViolation', next: expect.stringContaining('nox-mesh-host bundle > first-node.json') } });
    await expect(fs.access(path.join(root, 'var/lib/mesh-host/state.json'))).rejects.toThrow();
  });

  test('on a hosted machine, reconcile --dry-run shows what the carried bundle would raise, and raises nothing', async () => {
    const root = await machine('trial');

    const answer = await host(root, ['reconcile', '--dry-run']);

    expect(answer.code).toBe(0);
    for (const key of ['package:mesh-control', 'action:mesh-control-init', 'service:mesh-control-broker', 'service:mesh-control']) expect(answer.stdout).toContain(key);
    expect(answer.stdout).toContain('dry run: nothing was changed');
    await expect(fs.access(path.join(root, 'usr/bin/mesh-control'))).rejects.toThrow();
    await expect(fs.access(path.join(root, 'etc/mesh-host'))).rejects.toThrow();
  });

  test('a hosted machine holding something applied by hand is being repaired: reconcile holds it to that and raises no mesh', async () => {
    const root = await machine('repaired');
    const repair = path.join(scratch, 'repair.json');
    await fs.writeFile(repair, JSON.stringify({ resources: [{ shape: 'file', path: '/etc/motd', content: { text: 'repaired by hand\n' } }] }));
    expect(await host(root, ['apply', repair])).toMatchObject({ code: 0 });
    await fs.writeFile(path.join(root, 'etc/motd'), 'drifted\n');

    const answer = await host(root, ['reconcile', '--json']);

    expect(answer.code).toBe(0);
    expect((JSON.parse(answer.stdout) as RaisedFoundation).results.map((result) => `${result.key} ${result.outcome}`)).toEqual(['file:/etc/motd applied']);
    expect(await fs.readFile(path.join(root, 'etc/motd'), 'utf8')).toBe('repaired by hand\n');
    await expect(fs.access(path.join(root, 'usr/bin/mesh-control'))).rejects.toThrow();
  });
});
