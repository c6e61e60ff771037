// The main job, `./scripts/demo.sh`: a one-machine mesh on the embedded default, in ./demo.
// Makes a mesh (PGlite store), runs its broker and controller, and three machines — directories
// ./demo/hosts/{a,b,c} standing in for their roots, each with its own `nox-mesh-host run` —
// enrols each with a real one-time token, declares examples/web.json for all three, waits
// until every machine has applied it and reported, prints `mesh-control nodes` and each
// machine's `nox-mesh-host owned`, and stops everything with SIGTERM. Where this machine
// allows it (root, network namespaces, wireguard-go), each machine runs in a network namespace
// of its own and the overlay is brought up for real: its tunnels carry a ping between the
// machines (scripts/demo-overlay.ts); where it does not, one line says which check failed. The
// files stay in ./demo for a look; the next run starts again from nothing.
import { promises as fs } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { NodeListing } from '../actors/controller/nodes/list-nodes';
import { OperatorError } from '../actors/shared/operator-error';
import { isProcessAlive, readPidFile } from '../actors/shared/process/pid';
import { MeshRig, REPO_DIR, freePort } from '../e2e/mesh-rig';
import type { NetnsLab } from '../e2e/netns-lab';
import { makeDemoLab, overlaySupport, showTunnels } from './demo-overlay';
import { scriptArguments } from './script-arguments';
import { succeeded } from '../e2e/run-cli';
import { done, notYet, until } from '../e2e/until';

const DEMO_DIR = path.join(REPO_DIR, 'demo');
const MACHINES = ['a', 'b', 'c'] as const;
const EXAMPLE = path.join(REPO_DIR, 'examples', 'web.json');
const PREFERRED_PORT = 4222;
const started = performance.now();

/** ./demo belongs to a demo, broker, controller or host that is still running. */
class DemoInUse extends OperatorError {}

/** How ./demo is shown: relative to the checkout, as a newcomer typed it. */
function shown(file: string): string {
  const relative = path.relative(REPO_DIR, file);
  return relative.startsWith('..') ? file : `./${relative}`;
}

function say(line: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`[${seconds} s] ${line.split(REPO_DIR + path.sep).join('./')}\n`);
}

function print(text = ''): void {
  process.stdout.write(`${text}\n`);
}

/** Every pid file a running demo leaves in ./demo, and the pid in it when that process still lives. */
async function holdersOf(dir: string): Promise<Array<{ file: string; pid: number }>> {
  const files = [path.join(dir, 'demo.pid'), path.join(dir, 'mesh', 'broker', 'nats-server.pid'), path.join(dir, 'mesh', 'store.lock')];
  for (const name of await fs.readdir(path.join(dir, 'hosts')).catch(() => [])) {
    files.push(path.join(dir, 'hosts', name, 'var', 'lib', 'mesh-host', 'host.pid'));
  }
  const holders: Array<{ file: string; pid: number }> = [];
  for (const file of files) {
    const pid = await readPidFile(file);
    if (pid !== undefined && pid !== process.pid && isProcessAlive(pid)) holders.push({ file, pid });
  }
  return holders;
}

/** Starts ./demo again from nothing, unless something still running uses it. */
async function freshDemoDir(): Promise<void> {
  const holders = await holdersOf(DEMO_DIR);
  if (holders.length > 0) {
    const [first] = holders as [{ file: string; pid: number }];
    throw new DemoInUse(`${shown(DEMO_DIR)} is in use by process ${first.pid}${holders.length > 1 ? ` and ${holders.length - 1} more` : ''} (another demo, or a piece of it started by hand); its pid file`, {
      value: shown(first.file),
      next: `stop it (kill ${holders.map((holder) => holder.pid).join(' ')}), then run ./scripts/demo.sh again`,
    });
  }
  await fs.rm(DEMO_DIR, { recursive: true, force: true });
  await fs.mkdir(DEMO_DIR, { recursive: true });
  await fs.writeFile(path.join(DEMO_DIR, 'demo.pid'), `${process.pid}\n`);
}

function portIsFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

async function readText(file: string): Promise<string | undefined> {
  return fs.readFile(file, 'utf8').catch(() => undefined);
}

/** The files examples/web.json declares, with their text. */
async function declaredFiles(): Promise<Array<{ path: string; text: string }>> {
  const declaration = JSON.parse(await fs.readFile(EXAMPLE, 'utf8')) as { resources: Array<{ shape: string; path?: string; content?: { text?: string } }> };
  return declaration.resources.flatMap((resource) =>
    resource.shape === 'file' && resource.path !== undefined && resource.content?.text !== undefined ? [{ path: resource.path, text: resource.content.text }] : []);
}

async function demo(rig: MeshRig, overlay: { lab: NetnsLab } | { why: string }): Promise<void> {
  await rig.start();

  for (const name of MACHINES) {
    const issued = await rig.issueToken({ new: true });
    const enrolled = await rig.enrol(name, issued.token);
    say(`machine ${name}: token ${issued.token_id} issued (mesh-control token issue --new), enrolled with it as node ${enrolled.node} (nox-mesh-host enrol)`);
  }

  const mesh = JSON.parse(await fs.readFile(path.join(rig.meshDir, 'mesh.json'), 'utf8')) as { overlay: { interface: string } };
  const overlayFile = `etc/wireguard/${mesh.overlay.interface}.conf`;
  for (const name of MACHINES) {
    const hosts = path.join(rig.hostRoot(name), 'etc', 'mesh', 'hosts');
    await until(`machine ${name}'s overlay: ${overlayFile} and etc/mesh/hosts naming ${MACHINES.join(', ')}`, async () => {
      const names = await readText(hosts);
      const config = await readText(path.join(rig.hostRoot(name), overlayFile));
      const all = names !== undefined && MACHINES.every((other) => new RegExp(`\\s${other}$`, 'm').test(names));
      return all && config !== undefined ? done(true) : notYet(`${overlayFile}: ${config === undefined ? 'missing' : 'written'}\netc/mesh/hosts:\n${names ?? 'missing'}`);
    });
  }
  say(`every machine applied its overlay first: /${overlayFile} (its WireGuard peers) and /etc/mesh/hosts (the names of all three)`);

  const declaredAt = Date.now();
  for (const name of MACHINES) succeeded(await rig.control(['node', 'declare', name, EXAMPLE]));
  say(`declared ${shown(EXAMPLE)} for ${MACHINES.join(', ')} (mesh-control node declare); each gets it signed, as its full declaration`);

  const files = await declaredFiles();
  for (const name of MACHINES) {
    await until(`machine ${name} to write the files of ${shown(EXAMPLE)}`, async () => {
      const missing: string[] = [];
      for (const file of files) if ((await readText(path.join(rig.hostRoot(name), file.path))) !== file.text) missing.push(file.path);
      return missing.length === 0 ? done(true) : notYet(`not yet written as declared: ${missing.join(', ')}`);
    });
  }
  await until('every node to report after applying it', async () => {
    const nodes = await rig.nodes();
    const heard = (node: NodeListing): boolean => node.last_seen_at !== null && Date.parse(node.last_seen_at) >= declaredAt - 1000;
    return nodes.length === MACHINES.length && nodes.every(heard) ? done(true) : notYet(nodes.map((node) => `${node.name} last seen ${node.last_seen_at ?? 'never'}`).join('\n'));
  }, { timeoutMs: 20_000, intervalMs: 250 });
  say('every machine applied it and reported back');

  let wgShow: string | undefined;
  if ('lab' in overlay) wgShow = await showTunnels(rig, overlay.lab, MACHINES, say);
  else say(`the overlay's tunnels were not brought up: ${overlay.why}; each machine has its ${overlayFile} all the same`);

  print();
  print(`$ bin/mesh-control nodes --dir ${shown(rig.meshDir)}`);
  print(succeeded(await rig.control(['nodes'])).stdout.trimEnd());
  for (const name of MACHINES) {
    print();
    print(`$ bin/nox-mesh-host owned --root ${shown(rig.hostRoot(name))}`);
    print(succeeded(await rig.hostCli(name, ['owned'])).stdout.trimEnd());
  }
  if (wgShow !== undefined) {
    print();
    print(`$ wg show ${mesh.overlay.interface}   (on machine ${MACHINES[0]})`);
    print(wgShow);
  }
  print();
}

function finish(rig: MeshRig, ended: Array<{ label: string; exit: { code: number | null; signal: NodeJS.Signals | null } }>, lab: NetnsLab | undefined): void {
  const unclean = ended.filter((piece) => piece.exit.code !== 0);
  say(unclean.length === 0
    ? `stopped the ${ended.length} processes (3 hosts, the controller, the broker) with SIGTERM; each exited cleanly`
    : `stopped the processes; these did not exit cleanly: ${unclean.map((p) => `${p.label} (${p.exit.signal ?? `status ${p.exit.code}`})`).join(', ')}`);
  const dir = shown(rig.dir);
  const mesh = shown(rig.meshDir);
  const where = [
    [mesh, 'the mesh: keys, the broker\'s configuration and TLS material, the embedded store'],
    [`${dir}/hosts/{a,b,c}`, 'each machine\'s root: etc/wireguard/, etc/mesh/hosts, srv/www/, etc/motd.d/'],
    [`${dir}/hosts/a/var/lib/mesh-host/state.json`, 'what host a holds: identity, pins, declaration, what it owns'],
    [`${dir}/logs/`, 'what the broker, the controller and each host printed'],
  ];
  const width = Math.max(...where.map(([file]) => (file as string).length));
  if (lab !== undefined) {
    say(`removed the machines' network namespaces and their bridge ${lab.bridge}, and with them the tunnels and wireguard-go`);
  }
  print(`
Everything is in ${dir}:
${where.map(([file, what]) => `  ${(file as string).padEnd(width)}  ${what}`).join('\n')}
${lab === undefined ? byHand(dir, mesh) : `
The machines ran in network namespaces, removed now, and the broker listened on their bridge
(${rig.init?.broker.url ?? lab.gateway}), gone with them: to run the pieces by hand, raise the demo with
./scripts/demo.sh --no-overlay, which keeps everything on 127.0.0.1.`}
Done in ${((performance.now() - started) / 1000).toFixed(1)} s. Running ./scripts/demo.sh again starts over from nothing.`);
}

function byHand(dir: string, mesh: string): string {
  return `
Run the pieces by hand from this directory, the first three each in its own terminal:
  bin/mesh-control broker --dir ${mesh}
  bin/mesh-control serve --dir ${mesh}
  bin/nox-mesh-host run --root ${dir}/hosts/a      (and b, c: each node reconnects as it was)
then:
  bin/mesh-control nodes --dir ${mesh}
  bin/mesh-control node declare a examples/motd.json --dir ${mesh}
  bin/mesh-control node release c --dir ${mesh}
  bin/mesh-control token issue --new --dir ${mesh}  (then on a new machine: nox-mesh-host enrol --token …)
`;
}

async function main(): Promise<number> {
  let options;
  try {
    options = scriptArguments(process.argv.slice(2), { 'no-overlay': { type: 'boolean' } }, './scripts/demo.sh [--no-overlay]');
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\nnext: run ./scripts/demo.sh, or ./scripts/demo.sh --no-overlay to leave the tunnels down and everything on 127.0.0.1\n`);
    return 2;
  }
  print(`Novox Mesh demo: a broker, a controller and three machines, all on this one machine, in ${shown(DEMO_DIR)}`);
  try {
    await freshDemoDir();
  } catch (error) {
    if (error instanceof OperatorError) {
      process.stderr.write(error.toText());
      return error.exitCode;
    }
    throw error;
  }
  const support = overlaySupport({ skip: options['no-overlay'] === true });
  let lab: NetnsLab | undefined;
  let why = support.ok ? '' : support.why;
  if (support.ok) {
    say('making a network namespace per machine on one bridge, so each can bring its WireGuard tunnel up');
    lab = await makeDemoLab(MACHINES, (name) => path.join(DEMO_DIR, 'hosts', name)).catch((error: unknown) => {
      why = `the network namespaces could not be made: ${error instanceof Error ? error.message : String(error)}`;
      return undefined;
    });
  }
  const brokerHost = lab?.gateway ?? '127.0.0.1';
  const port = (await portIsFree(PREFERRED_PORT, brokerHost)) ? PREFERRED_PORT : await freePort();
  const rig = new MeshRig({
    dir: DEMO_DIR, hosts: MACHINES, brokerPort: port, say,
    ...(lab === undefined ? {} : { brokerHost: lab.gateway, hostPrefix: (name: string) => (lab as NetnsLab).enter(name) }),
  });

  // Ctrl-C stops every piece cleanly, as the end of the demo does.
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupted = signal;
    say(`${signal}: stopping everything`);
    void rig.stop().finally(() => lab?.destroy());
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    await demo(rig, lab === undefined ? { why } : { lab });
    const ended = await rig.stop();
    await lab?.destroy();
    finish(rig, ended, lab);
    return 0;
  } catch (error) {
    await rig.stop();
    await lab?.destroy();
    if (interrupted !== undefined) {
      say(`stopped before the end; nothing is left running, and ${shown(DEMO_DIR)} holds what was made so far`);
      return 130;
    }
    process.stderr.write(`\nThe demo stopped: ${error instanceof OperatorError ? error.toText() : error instanceof Error ? error.message : String(error)}\n`);
    process.stderr.write(`What each piece printed is in ${shown(rig.logDir)}/.\n`);
    return 1;
  } finally {
    await fs.rm(path.join(DEMO_DIR, 'demo.pid'), { force: true });
  }
}

void main().then((code) => {
  process.exitCode = code;
});
