import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClusterRig } from '../../e2e/cluster-rig';
import { succeeded } from '../../e2e/run-cli';
import { done, NeverComing, notYet, until } from '../../e2e/until';

/** What one run of the service-gap measurement is asked to do. */
export interface ServiceGapPlan {
  /** Real `nox-mesh-host run` processes. */
  hosts: number;
  /** Times a server is killed with -9: the one most hosts are linked to (hosts spread over the servers). */
  serverKills: number;
  /** Times the acting controller is killed with -9. */
  controllerKills: number;
  say(line: string): void;
}

/** What was measured, in ms from each kill. */
export interface ServiceGap {
  /** Per host on the killed server, per server kill: until the host says it linked again (to another server). */
  relinkMs: number[];
  /** Per host on the killed server, per server kill: until the host holds the revision registered at the moment of the kill. */
  appliedMs: number[];
  /** Per controller kill: until the standby says it serves. */
  failoverMs: number[];
  /** How long the rig took to come up, with every host enrolled and applied once, ms. */
  setupMs: number;
}

const FILE = '/etc/gap/web.conf';
const LINKED = /linked to (tls:\/\/\S+) as node/g;
const SERVING = /serving: epoch \d+/;
const STANDING_BY = /lease: standing by/;

/**
 * The gap in service a host sees on a 3-server cluster, on real processes on loopback
 * (e2e/cluster-rig.ts: PostgreSQL, three nats-servers, two `mesh-control serve`, real hosts
 * with the link's default backoff):
 *
 * - a server kill: the server most hosts are linked to (each starts on the one its name falls
 *   on) is killed with -9, and at that moment a new revision of a module every host holds is
 *   registered (`together`: sent to every host at once). Per host that was on it: the time until
 *   it links again, and until it holds the new revision, which includes the controller's own
 *   failover to another server. Every host must hold it before the server is started again.
 * - a controller kill: the acting `mesh-control serve` is killed with -9; the time until the
 *   standby says it serves (it waits out the lease's 15 s age, as on one server).
 */
export async function measureServiceGap(plan: ServiceGapPlan): Promise<ServiceGap> {
  const started = performance.now();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh bench-cluster-gap '));
  const hosts = Array.from({ length: plan.hosts }, (_, index) => `g${String(index + 1).padStart(2, '0')}`);
  const rig = new ClusterRig({ dir, hosts, say: plan.say });
  try {
    await rig.start();
    for (const name of hosts) {
      const token = await rig.issueToken();
      await until(`${name} to enrol`, async () => {
        const answer = await rig.hostCli(name, ['enrol', '--token', token.token, '--json']);
        if (answer.code === 0) return done(true);
        if (!answer.stdout.includes('"retryable":true')) succeeded(answer);
        return notYet(answer.stdout);
      }, { timeoutMs: 120_000, intervalMs: 2000 });
    }
    let version = 1;
    await addModule(rig, dir, version);
    for (const name of hosts) succeeded(await rig.control(['assign', name, 'web']));
    await allHold(rig, hosts, version, 180_000);
    const setupMs = performance.now() - started;
    plan.say(`cluster gap: ${hosts.length} hosts enrolled and applied in ${(setupMs / 1000).toFixed(0)} s`);

    const relinkMs: number[] = [];
    const appliedMs: number[] = [];
    for (let kill = 1; kill <= plan.serverKills; kill += 1) {
      const linkedTo = hosts.map((name) => [...rig.host(name).output().matchAll(LINKED)].at(-1)?.[1]);
      const url = mostCommon(linkedTo.filter((each): each is string => each !== undefined));
      const server = rig.servers.find((each) => each.url === url);
      if (server === undefined) throw new Error(`the hosts are linked to ${String(url)}, which is no server of the rig`);
      const onIt = hosts.filter((_, index) => linkedTo[index] === url);
      const marks = new Map(hosts.map((name) => [name, rig.host(name).mark()]));
      version += 1;
      const moduleDir = await writeModule(dir, version);
      const killedAt = performance.now();
      await rig.killServer(server.name);
      // Registered through whichever server still answers, as a person would at that moment.
      let registrationFailed: unknown;
      const registering = registerModule(rig, moduleDir, version).catch((error: unknown) => {
        registrationFailed = error;
      });
      const relinked = new Map<string, number>();
      const applied = new Map<string, number>();
      await until(`every host to link again and hold web ${version}.0.0 after ${server.name} was killed`, async () => {
        if (registrationFailed !== undefined) throw new NeverComing(`web ${version}.0.0 could not be registered: ${String(registrationFailed)}`);
        for (const name of hosts) {
          if (onIt.includes(name) && !relinked.has(name) && LINKED.test(rig.host(name).output(marks.get(name)))) relinked.set(name, performance.now() - killedAt);
          LINKED.lastIndex = 0;
          if (!applied.has(name) && (await hostHolds(rig, name, version))) applied.set(name, performance.now() - killedAt);
        }
        return relinked.size === onIt.length && applied.size === hosts.length ? done(true) : notYet(`relinked ${relinked.size} of ${onIt.length}, applied ${applied.size} of ${hosts.length}`);
      }, { timeoutMs: 180_000, intervalMs: 25 });
      await registering;
      relinkMs.push(...relinked.values());
      const appliedOnIt = new Map([...applied].filter(([name]) => onIt.includes(name)));
      appliedMs.push(...appliedOnIt.values());
      plan.say(`cluster gap: kill ${kill} (${server.name}, ${onIt.length} of ${hosts.length} hosts on it): relinked in ${fmt(relinked)}, applied in ${fmt(appliedOnIt)}`);
      await rig.startServer(server.name);
      // Back in the cluster before the next kill: JetStream answers with all three again.
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }

    const failoverMs: number[] = [];
    for (let kill = 1; kill <= plan.controllerKills; kill += 1) {
      const acting = await rig.actingController();
      const standbyIndex = rig.controllers.findIndex((serve, index) => index !== acting && serve?.running === true);
      const standby = rig.controllers[standbyIndex];
      if (standby === undefined) throw new Error('no standby controller is running');
      const mark = standby.mark();
      // At a moment within the renewal period not in step with it (the bench's failover does the same).
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5000));
      const killedAt = performance.now();
      await rig.killController(acting);
      await standby.waitFor(SERVING, { from: mark, timeoutMs: 60_000 });
      failoverMs.push(performance.now() - killedAt);
      plan.say(`cluster gap: controller kill ${kill}: the standby served after ${Math.round(failoverMs.at(-1) ?? 0)} ms`);
      const restarted = await rig.startController(acting);
      await restarted.waitFor(STANDING_BY, { timeoutMs: 60_000 });
    }
    return { relinkMs, appliedMs, failoverMs, setupMs };
  } finally {
    await rig.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function fmt(times: Map<string, number>): string {
  const values = [...times.values()].sort((a, b) => a - b);
  return `${Math.round(values[0] ?? 0)}-${Math.round(values.at(-1) ?? 0)} ms`;
}

function mostCommon(values: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

async function writeModule(dir: string, version: number): Promise<string> {
  const moduleDir = path.join(dir, `web-${version}`);
  await fs.mkdir(moduleDir, { recursive: true });
  await fs.writeFile(path.join(moduleDir, 'module.json'), JSON.stringify({
    name: 'web', version: `${version}.0.0`, upgrade_policy: 'together',
    resources: [
      { shape: 'directory', path: '/etc/gap', mode: '0755' },
      { shape: 'file', path: FILE, content: { text: `web ${version}\n` }, mode: '0644' },
    ],
  }));
  return moduleDir;
}

async function addModule(rig: ClusterRig, dir: string, version: number): Promise<void> {
  await registerModule(rig, await writeModule(dir, version), version);
}

/** `module add`, asked again while the answer says it may be, as the chaos test does. */
async function registerModule(rig: ClusterRig, moduleDir: string, version: number): Promise<void> {
  await until(`web ${version}.0.0 to be registered`, async () => {
    const answer = await rig.control(['module', 'add', moduleDir, '--json']);
    if (answer.code === 0) return done(true);
    if ((answer.stdout + answer.stderr).includes(`is not newer than the registered ${version}.0.0;`)) return done(true);
    // Refusals while a server or the controller is away are asked again; a real refusal shows in the wait's message.
    return notYet(answer.stdout + answer.stderr);
  }, { timeoutMs: 120_000, intervalMs: 250 });
}

async function hostHolds(rig: ClusterRig, name: string, version: number): Promise<boolean> {
  return (await fs.readFile(path.join(rig.hostRoot(name), FILE), 'utf8').catch(() => '')) === `web ${version}\n`;
}

async function allHold(rig: ClusterRig, hosts: readonly string[], version: number, timeoutMs: number): Promise<void> {
  await until(`every host to hold web ${version}.0.0`, async () => {
    const behind: string[] = [];
    for (const name of hosts) if (!(await hostHolds(rig, name, version))) behind.push(name);
    return behind.length === 0 ? done(true) : notYet(`behind: ${behind.join(', ')}`);
  }, { timeoutMs, intervalMs: 250 });
}
