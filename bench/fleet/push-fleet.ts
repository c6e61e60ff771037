import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { Resource } from '../../schema/resource';
import { openNodeConsumer } from '../../actors/controller/declarations/declaration-stream';
import { ensureDeclarationStream } from '../../actors/controller/serve/ensure-declaration-stream';
import { generateSigningKeyPair } from '../../actors/shared/crypto';
import { startTestBroker } from '../../tests/broker/test-broker';
import { signedDeclaration } from '../host/signed-declaration';
import { cpuSeconds } from '../proc-stat';
import { admitMembers } from './admit-members';
import { fleetMembers, inBatches, probeFleetBroker } from './fleet-member';
import { CONTROLLER_PATIENCE, publishDeclaration } from './publish-declaration';
import { ReportWatch } from './report-watch';
import { shardCount, SimulatorShards } from './simulator-shards';

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
  /** Processes the simulated hosts are spread over (simulator-shards.ts). */
  shards: number;
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
  /** Resident memory of the simulator's processes with the whole fleet up, MB. */
  rssMb: number;
  /** Processes the simulated hosts ran in. */
  shards: number;
  /** CPU time of the simulated hosts' processes per node per counted declaration, ms. */
  simulatorCpuMsPerNode: number;
  /** CPU time of this process (the controller's signing and sends, the report watch) per node per counted declaration, ms. */
  controllerCpuMsPerNode: number;
  /** CPU time of nats-server per node per counted declaration, ms. */
  brokerCpuMsPerNode: number;
  /** Lines the simulated hosts logged (refusals, intake trouble), a few. */
  notes: string[];
  /** Publishes sent again after the stream's acknowledgement did not come in time (CONTROLLER_PATIENCE). */
  publishRetries: number;
  /**
   * Messages the simulated hosts' connections received and sent per node per counted
   * declaration (deliveries, pull statuses and heartbeats in; pulls, acks and reports out): what
   * each node costs the broker, counted rather than timed.
   */
  messagesInPerNode: number;
  messagesOutPerNode: number;
  /** Counted reports that had not arrived when their round's wait ran out (each counted at the wait: see measurePush). */
  missing: number;
  /**
   * The machine's one-minute load average as each counted round began. The CPU figures above
   * grow with it (the same build read 2.7 to 3.8 ms per node one run after another), so two
   * runs' figures are compared only beside their loads.
   */
  loadAverages: number[];
}

/** Declarations in flight at once: the controller's sends overlap, one per node's work queue. */
const PUBLISH_WIDTH = 64;


/**
 * Push-to-applied across a simulated fleet of `plan.nodes`, on a broker of its own: a real
 * nats-server with TLS and an nkey user per node (admitted in one reload), the declaration
 * stream and a durable consumer per node made by the controller's own code, and one
 * SimulatedHost per node on a root of its own under /dev/shm, spread over `plan.shards`
 * processes. Each round the controller signs
 * a new declaration for every node and publishes it to the node's subject as sendComposed does;
 * a node's time runs from the start of its publish to the arrival of its report on that
 * declaration. Then the floor: raw request/reply round trips over the same connections.
 */
export async function measurePush(plan: PushPlan): Promise<PushMeasurement> {
  const setupStarted = performance.now();
  const broker = await startTestBroker({ dirPrefix: 'mesh bench-broker' });
  const rootsDir = await fs.mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'mesh-bench-fleet-'));
  let fleet: SimulatorShards | undefined;
  try {
    const controller = await broker.connectAsController({ name: 'bench controller' });
    await ensureDeclarationStream(controller);
    const signing = generateSigningKeyPair();
    const members = fleetMembers(plan.nodes, `n${plan.nodes}`);
    plan.say(`push ${plan.nodes}: admitting ${plan.nodes} node users in one reload, making their consumers`);
    await admitMembers(broker, members);
    await inBatches(members, 16, (member) => openNodeConsumer(controller, member.name, { fresh: false }));
    const processes = shardCount(plan.shards, members.length);
    plan.say(`push ${plan.nodes}: connecting ${plan.nodes} simulated hosts in ${processes} process${processes === 1 ? '' : 'es'}`);
    const fleetBroker = await probeFleetBroker(broker.url, broker.fingerprint);
    fleet = await SimulatorShards.start({ members, count: plan.shards, broker: fleetBroker, controller: { public_key: signing.public_key }, rootsDir, width: Math.max(4, Math.floor(32 / plan.shards)) });
    const shards = fleet;
    const setupMs = performance.now() - setupStarted;
    const watch = new ReportWatch(controller);
    const js = jetstream(controller);

    const latencies: number[] = [];
    const roundTimes: number[] = [];
    let simulatorCpuMs = 0;
    let controllerCpuMs = 0;
    let brokerCpuMs = 0;
    let publishRetries = 0;
    let missing = 0;
    let messagesIn = 0;
    let messagesOut = 0;
    const loadAverages: number[] = [];
    for (let round = 1; round <= plan.rounds; round += 1) {
      const signed = members.map((member) => ({ member, ...signedDeclaration({ node: member.name, generation: round, resources: roundResources(round) }, signing.secret_key) }));
      const trafficBefore = await shards.traffic();
      const loadAverage = os.loadavg()[0] ?? 0;
      const cpuBefore = process.cpuUsage();
      const shardsBefore = shards.cpuSeconds();
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
      let unsent = 0;
      await inBatches(signed, PUBLISH_WIDTH, async ({ member, envelope }) => {
        sentAt.set(member.name, performance.now());
        const sent = await publishDeclaration(js, member.name, JSON.stringify(envelope), `${member.name}:${round}`);
        publishRetries += sent.retries;
        if (!sent.ok) unsent += 1;
      });
      if (unsent > 0) plan.say(`push ${plan.nodes}: round ${round}: ${unsent} declarations were not acknowledged by the stream after ${CONTROLLER_PATIENCE.tries} tries of ${CONTROLLER_PATIENCE.ackWaitMs / 1000} s`);
      const outcome = await Promise.race([all.then((ats) => ({ done: true as const, last: ats.reduce((a, b) => Math.max(a, b), 0) })), sleepFor(plan.roundTimeoutMs)]);
      const counted = round > 1 || !plan.warmUp;
      // A report still missing when the wait runs out is counted as the time from its send to
      // the end of the wait: a lower bound on its time, so a missed goal still reads as missed,
      // and the note says how many. The watch forgets them; one arriving later is an unexpected
      // report, not a time.
      const late = outcome.done ? 0 : plan.nodes - times.length;
      if (!outcome.done) {
        plan.say(`push ${plan.nodes}: round ${round}: ${late} reports did not come within ${plan.roundTimeoutMs / 1000} s (first: ${watch.awaitedNodes().join(', ')}); counted at the wait`);
        const now = performance.now();
        if (counted) for (const name of watch.awaitedNodes(plan.nodes)) times.push(now - (sentAt.get(name) ?? started));
        watch.forgetAll();
        all.catch(() => undefined);
      }
      const last = outcome.done ? outcome.last : performance.now();
      if (counted) {
        const cpu = process.cpuUsage(cpuBefore);
        controllerCpuMs += (cpu.user + cpu.system) / 1000;
        simulatorCpuMs += (shards.cpuSeconds() - shardsBefore) * 1000;
        brokerCpuMs += (cpuSeconds(broker.broker.pid) - brokerBefore) * 1000;
        latencies.push(...times);
        roundTimes.push(last - started);
        loadAverages.push(loadAverage);
        missing += late;
        const trafficAfter = await shards.traffic();
        messagesIn += trafficAfter.inMsgs - trafficBefore.inMsgs;
        messagesOut += trafficAfter.outMsgs - trafficBefore.outMsgs;
      }
      if (plan.nodes >= 100) plan.say(`push ${plan.nodes}: round ${round}${round === 1 && plan.warmUp ? ' (warm-up)' : ''}: ${late === 0 ? 'all reported' : `${plan.nodes - late} of ${plan.nodes} reported`} in ${Math.round(last - started)} ms${publishRetries > 0 ? `, ${publishRetries} publishes sent again so far` : ''}`);
    }
    watch.close();

    const payload = new TextEncoder().encode(JSON.stringify(signedDeclaration({ node: members[0]?.name ?? 'n', generation: 1, resources: roundResources(1) }, signing.secret_key).envelope));
    const floor: number[] = [];
    if (plan.nodes === 1) {
      floor.push(...(await shards.floor(payload, plan.floorRounds)));
    } else {
      for (let round = 0; round < plan.floorRounds; round += 1) floor.push(...(await shards.floor(payload)));
    }
    const per = Math.max(1, latencies.length);
    const rssMb = shards.rssMb;
    const notes = await shards.stop();
    return { latencies, floor, rounds: roundTimes, setupMs, rssMb, shards: shards.count,
      simulatorCpuMsPerNode: simulatorCpuMs / per, controllerCpuMsPerNode: controllerCpuMs / per,
      brokerCpuMsPerNode: brokerCpuMs / per, notes, publishRetries, missing,
      messagesInPerNode: messagesIn / per, messagesOutPerNode: messagesOut / per, loadAverages };
  } finally {
    fleet?.kill();
    await broker.stop();
    await fs.rm(rootsDir, { recursive: true, force: true });
  }
}

/** Round `round`'s declaration: a directory and two small files whose text says the round, so every round applies. */
export function roundResources(round: number): Resource[] {
  return [
    { shape: 'directory', path: '/etc/mesh-bench', mode: '0755', owner: 'root', group: 'root' },
    { shape: 'file', path: '/etc/mesh-bench/round', content: { text: `round ${round}\n` }, mode: '0644', owner: 'root', group: 'root' },
    { shape: 'file', path: '/etc/mesh-bench/motd', content: { text: `This machine is managed by Novox Mesh (round ${round}).\n` }, mode: '0644', owner: 'root', group: 'root' },
  ];
}

function sleepFor(ms: number): Promise<{ done: false }> {
  return new Promise((resolve) => setTimeout(() => resolve({ done: false }), ms).unref());
}
