import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { Resource } from '../../schema/resource';
import { openNodeConsumer } from '../../actors/controller/declarations/declaration-stream';
import { ensureDeclarationStream } from '../../actors/controller/serve/ensure-declaration-stream';
import { declarationSubject } from '../../actors/shared/bus/subjects';
import { generateSigningKeyPair } from '../../actors/shared/crypto';
import { startTestBroker } from '../../tests/broker/test-broker';
import { signedDeclaration } from '../host/signed-declaration';
import { cpuSeconds } from '../proc-stat';
import { admitMembers } from './admit-members';
import { fleetMembers, inBatches, probeFleetBroker } from './fleet-member';
import { concurrentFloor, sequentialFloor } from './nats-floor';
import { ReportWatch } from './report-watch';
import { SimulatedHost } from './simulated-host';
import { mainThreadCpuSeconds } from './thread-cpu';

/** What one fleet size is asked to do. */
export interface PushPlan {
  nodes: number;
  /** Pushes to every node, each a new generation. */
  rounds: number;
  /** Whether the first round is a warm-up, not counted (it also makes the directory). */
  warmUp: boolean;
  /** Floor samples: sequential round trips for one node, concurrent rounds for a fleet. */
  floorRounds: number;
  /** How long one round may take before the nodes still silent are counted as missing. */
  roundTimeoutMs: number;
  say(line: string): void;
}

/** What was measured at one fleet size. */
export interface PushMeasurement {
  /** Every node's push-to-applied time of every counted round, ms. */
  latencies: number[];
  /** Round trips of raw NATS request/reply at the same size, ms. */
  floor: number[];
  /** First publish to last report of each counted round, ms. */
  rounds: number[];
  /** How long the fleet took to come up (users, consumers, connections), ms. */
  setupMs: number;
  /** The bench process's resident memory with the whole fleet up, MB. */
  rssMb: number;
  /**
   * CPU time of this process (the controller's sends, every simulated host, the report
   * watch) per node per counted declaration, ms: what sharing the machine costs each node.
   */
  simulatorCpuMsPerNode: number;
  /** The part of it spent on the process's main thread, where all the JavaScript runs, ms. */
  mainThreadCpuMsPerNode: number;
  /** CPU time of nats-server per node per counted declaration, ms. */
  brokerCpuMsPerNode: number;
  /** Lines the simulated hosts logged (refusals, intake trouble), a few. */
  notes: string[];
}

/** Declarations in flight at once: the controller's sends overlap, one per node's work queue. */
const PUBLISH_WIDTH = 64;

/**
 * Push-to-applied across a simulated fleet of `plan.nodes`, on a broker of its own: a real
 * nats-server with TLS and an nkey user per node (admitted in one reload), the declaration
 * stream and a durable consumer per node made by the controller's own code, and one
 * SimulatedHost per node on a root of its own under /dev/shm. Each round the controller signs
 * a new declaration for every node and publishes it to the node's subject as sendComposed does;
 * a node's time runs from the start of its publish to the arrival of its report on that
 * declaration. Then the floor: raw request/reply round trips over the same connections.
 */
export async function measurePush(plan: PushPlan): Promise<PushMeasurement> {
  const setupStarted = performance.now();
  const broker = await startTestBroker({ dirPrefix: 'mesh bench-broker' });
  const rootsDir = await fs.mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'mesh-bench-fleet-'));
  const hosts: SimulatedHost[] = [];
  try {
    const controller = await broker.connectAsController({ name: 'bench controller' });
    await ensureDeclarationStream(controller);
    const signing = generateSigningKeyPair();
    const members = fleetMembers(plan.nodes, `n${plan.nodes}`);
    plan.say(`push ${plan.nodes}: admitting ${plan.nodes} node users in one reload, making their consumers`);
    await admitMembers(broker, members);
    await inBatches(members, 16, (member) => openNodeConsumer(controller, member.name, { fresh: false }));
    plan.say(`push ${plan.nodes}: connecting ${plan.nodes} simulated hosts`);
    const fleetBroker = await probeFleetBroker(broker.url, broker.fingerprint);
    await inBatches(members, 32, async (member) => {
      hosts.push(await SimulatedHost.start(member, fleetBroker, signing, rootsDir));
    });
    const setupMs = performance.now() - setupStarted;
    const rssMb = process.memoryUsage().rss / 2 ** 20;
    const watch = new ReportWatch(controller);
    const js = jetstream(controller);

    const latencies: number[] = [];
    const roundTimes: number[] = [];
    let simulatorCpuMs = 0;
    let mainThreadCpuMs = 0;
    let brokerCpuMs = 0;
    for (let round = 1; round <= plan.rounds; round += 1) {
      const signed = members.map((member) => ({ member, ...signedDeclaration({ node: member.name, generation: round, resources: roundResources(round) }, signing.secret_key) }));
      const cpuBefore = process.cpuUsage();
      const mainBefore = mainThreadCpuSeconds();
      const brokerBefore = cpuSeconds(broker.broker.pid);
      const started = performance.now();
      const times: number[] = [];
      const awaited = signed.map(({ member, digest }) => watch.expect(member.name, digest));
      const sentAt = new Map<string, number>();
      const all = Promise.all(awaited.map(async (arrival, index) => {
        const received = await arrival;
        const name = signed[index]?.member.name as string;
        const failed = received.report.results.filter((result) => result.outcome === 'failed');
        if (failed.length > 0) throw new Error(`node ${name} failed ${failed.map((result) => `${result.key}: ${result.detail ?? ''}`).join('; ')}`);
        times.push(received.at - (sentAt.get(name) as number));
        return received.at;
      }));
      await inBatches(signed, PUBLISH_WIDTH, async ({ member, envelope }) => {
        sentAt.set(member.name, performance.now());
        await js.publish(declarationSubject(member.name), JSON.stringify(envelope), { msgID: `${member.name}:${round}` });
      });
      const outcome = await Promise.race([all.then((ats) => ({ done: true as const, last: ats.reduce((a, b) => Math.max(a, b), 0) })), sleepFor(plan.roundTimeoutMs)]);
      if (!outcome.done) {
        const late = plan.nodes - times.length;
        if (plan.nodes >= 100) plan.say(`push ${plan.nodes}: round ${round}: ${late} reports did not come within ${plan.roundTimeoutMs / 1000} s (first: ${watch.awaitedNodes().join(', ')})`);
        watch.close();
        throw new Error(`${late} of ${plan.nodes} nodes did not report within ${plan.roundTimeoutMs / 1000} s of round ${round}; ${hosts.flatMap((host) => host.notes).slice(0, 3).join(' / ')}`);
      }
      if (round > 1 || !plan.warmUp) {
        const cpu = process.cpuUsage(cpuBefore);
        simulatorCpuMs += (cpu.user + cpu.system) / 1000;
        mainThreadCpuMs += (mainThreadCpuSeconds() - mainBefore) * 1000;
        brokerCpuMs += (cpuSeconds(broker.broker.pid) - brokerBefore) * 1000;
        latencies.push(...times);
        roundTimes.push(outcome.last - started);
      }
      if (plan.nodes >= 100) plan.say(`push ${plan.nodes}: round ${round}${round === 1 && plan.warmUp ? ' (warm-up)' : ''}: all reported in ${Math.round(outcome.last - started)} ms`);
    }
    watch.close();

    const payload = new TextEncoder().encode(JSON.stringify(signedDeclaration({ node: members[0]?.name ?? 'n', generation: 1, resources: roundResources(1) }, signing.secret_key).envelope));
    const floor: number[] = [];
    const first = hosts[0];
    if (plan.nodes === 1 && first !== undefined) {
      floor.push(...(await sequentialFloor(first.member.name, first.connection, plan.floorRounds, payload)));
    } else {
      for (let round = 0; round < plan.floorRounds; round += 1) {
        floor.push(...(await concurrentFloor(hosts.map((host) => ({ name: host.member.name, connection: host.connection })), payload)));
      }
    }
    return { latencies, floor, rounds: roundTimes, setupMs, rssMb,
      simulatorCpuMsPerNode: simulatorCpuMs / Math.max(1, latencies.length),
      mainThreadCpuMsPerNode: mainThreadCpuMs / Math.max(1, latencies.length),
      brokerCpuMsPerNode: brokerCpuMs / Math.max(1, latencies.length), notes: hosts.flatMap((host) => host.notes).slice(0, 5) };
  } finally {
    await inBatches(hosts, 64, (host) => host.stop().catch(() => undefined));
    await broker.stop();
    await fs.rm(rootsDir, { recursive: true, force: true });
  }
}

/** Round `round`'s declaration: a directory and two small files whose text says the round, so every round applies. */
function roundResources(round: number): Resource[] {
  return [
    { shape: 'directory', path: '/etc/mesh-bench', mode: '0755', owner: 'root', group: 'root' },
    { shape: 'file', path: '/etc/mesh-bench/round', content: { text: `round ${round}\n` }, mode: '0644', owner: 'root', group: 'root' },
    { shape: 'file', path: '/etc/mesh-bench/motd', content: { text: `This machine is managed by Novox Mesh (round ${round}).\n` }, mode: '0644', owner: 'root', group: 'root' },
  ];
}

function sleepFor(ms: number): Promise<{ done: false }> {
  return new Promise((resolve) => setTimeout(() => resolve({ done: false }), ms).unref());
}
