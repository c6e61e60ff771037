import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrokerUser } from '../../actors/controller/broker/auth-file';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { addNodeConsumer } from '../../actors/controller/declarations/declaration-stream';
import { answeredOrMade } from '../../actors/controller/serve/ensure-kv-bucket';
import { DECLARATION_STREAM, declarationConsumer } from '../../actors/shared/bus/subjects';
import { ensureDeclarationStream } from '../../actors/controller/serve/ensure-declaration-stream';
import { generateSigningKeyPair } from '../../actors/shared/crypto';
import { startTestCluster } from '../../tests/broker/test-cluster';
import { signedDeclaration } from '../host/signed-declaration';
import { cpuSeconds } from '../proc-stat';
import { fleetMembers, inBatches, probeFleetBroker } from '../fleet/fleet-member';
import { roundResources } from '../fleet/push-fleet';
import { CONTROLLER_PATIENCE, publishDeclaration, type PublishPatience } from '../fleet/publish-declaration';
import { ReportWatch } from '../fleet/report-watch';
import { SimulatorShards } from '../fleet/simulator-shards';

/** What one cluster push measurement is asked to do. */
export interface ClusterPushPlan {
  nodes: number;
  /** Pushes to every node; the first is a warm-up, not counted, when there are more than one. */
  rounds: number;
  roundTimeoutMs: number;
  /** Processes the simulated hosts run in. */
  shards: number;
  say(line: string): void;
}

/** What was measured on the cluster. */
export interface ClusterPushMeasurement {
  latencies: number[];
  /** Reports still missing when a round's wait ran out (each counted at the wait, a lower bound). */
  missing: number;
  setupMs: number;
  /** nats-server CPU (all three servers) per node per counted declaration, ms. */
  brokerCpuMsPerNode: number;
  publishRetries: number;
  unsent: number;
}

const PUBLISH_WIDTH = 64;

/**
 * Push-to-applied on a real 3-server cluster (tests/broker/test-cluster.ts, written as
 * `mesh-control broker cluster` writes it): the declaration stream and every node's durable
 * consumer made by the controller's own code with 3 replicas, every simulated host
 * (bench/fleet's SimulatedHost, in `shards` processes) linked to the server its name falls on,
 * as the hosts of a mesh are (pinned-attempt.ts startingServer), and the controller's
 * sends and report watch on a connection of their own. The same measurement as
 * bench/fleet/push-fleet.ts on one server, kept apart so that work can change freely.
 */
export async function measureClusterPush(plan: ClusterPushPlan): Promise<ClusterPushMeasurement> {
  const setupStarted = performance.now();
  const cluster = await startTestCluster({ dirPrefix: 'mesh bench-cluster-push' });
  const rootsDir = await fs.mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'mesh-bench-cluster-'));
  let fleet: SimulatorShards | undefined;
  try {
    const controller = await cluster.connectAsController('bench controller');
    await ensureDeclarationStream(controller, 3);
    const signing = generateSigningKeyPair();
    const members = fleetMembers(plan.nodes, `c${plan.nodes}`);
    plan.say(`cluster push ${plan.nodes}: admitting ${plan.nodes} node users on every server in one reload each, making ${plan.nodes} consumers with 3 replicas`);
    await cluster.setUsers([{ role: 'controller', nkey: cluster.controllerNkey }, ...members.map((member): BrokerUser => ({ role: 'node', node: member.name, nkey: member.identity.nkey_public }))]);
    const consumersStarted = performance.now();
    // Each consumer of 3 replicas is a group of its own the servers elect a leader for: made a
    // few at a time with a long wait, and looked for when the answer is late (nats-server 2.9
    // may make it and stay silent, as ensure-kv-bucket.ts says).
    const manager = await jetstreamManager(controller, { timeout: 30_000 });
    let made = 0;
    await inBatches(members, 4, async (member) => {
      await makeConsumer(manager, member.name);
      made += 1;
      // Thousands take minutes: the rate as it goes says whether the group count slows it.
      if (made % 1000 === 0 && made < plan.nodes) plan.say(`cluster push ${plan.nodes}: ${made} consumers made in ${((performance.now() - consumersStarted) / 1000).toFixed(0)} s`);
    });
    plan.say(`cluster push ${plan.nodes}: consumers made in ${((performance.now() - consumersStarted) / 1000).toFixed(0)} s; connecting the simulated hosts, each to the server its name falls on`);
    const fleetBroker = await probeFleetBroker(cluster.urls[0] as string, cluster.fingerprint, cluster.urls);
    fleet = await SimulatorShards.start({ members, count: plan.shards, broker: fleetBroker, controller: { public_key: signing.public_key }, rootsDir, width: Math.max(4, Math.floor(32 / plan.shards)) });
    const setupMs = performance.now() - setupStarted;
    const watch = new ReportWatch(controller);
    const js = jetstream(controller);
    const latencies: number[] = [];
    let brokerCpuMs = 0;
    let publishRetries = 0;
    let unsent = 0;
    let missing = 0;
    const pids = (): number[] => cluster.servers.flatMap((server) => (server.process === undefined ? [] : [server.process.pid]));
    for (let round = 1; round <= plan.rounds; round += 1) {
      const counted = plan.rounds === 1 || round > 1;
      const signed = members.map((member) => ({ member, ...signedDeclaration({ node: member.name, generation: round, resources: roundResources(round) }, signing.secret_key) }));
      const brokerBefore = pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
      const sentAt = new Map<string, number>();
      const times: number[] = [];
      const all = Promise.all(signed.map(async ({ member, digest }) => {
        const received = await watch.expect(member.name, digest);
        times.push(received.at - (sentAt.get(member.name) as number));
      }));
      const started = performance.now();
      let refusals = 0;
      // Three servers holding every consumer's group on two cores may leave the stream without
      // a leader for a while: the sends wait for it longer than on one server, and say so.
      const patience: PublishPatience = {
        ...CONTROLLER_PATIENCE,
        settleMs: 300_000,
        onRefusal: (error) => {
          refusals += 1;
          if (refusals === 1 || refusals % 1000 === 0) plan.say(`cluster push ${plan.nodes}: round ${round}: ${refusals} publishes refused so far, ${Math.round(performance.now() - started)} ms into the round (${String(error)})`);
        },
      };
      await inBatches(signed, PUBLISH_WIDTH, async ({ member, envelope }) => {
        sentAt.set(member.name, performance.now());
        const sent = await publishDeclaration(js, member.name, JSON.stringify(envelope), `${member.name}:${round}`, patience);
        publishRetries += sent.retries;
        if (!sent.ok) unsent += 1;
      }).catch(async (error: unknown) => {
        plan.say(`cluster push ${plan.nodes}: round ${round}: a publish failed: ${await streamState(manager)}`);
        throw error;
      });
      const finished = await Promise.race([all.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), plan.roundTimeoutMs).unref())]);
      const late = finished ? 0 : plan.nodes - times.length;
      if (!finished) {
        all.catch(() => undefined);
        const now = performance.now();
        if (counted) for (const name of watch.awaitedNodes(plan.nodes)) times.push(now - (sentAt.get(name) ?? started));
        watch.forgetAll();
      }
      if (counted) {
        latencies.push(...times);
        missing += late;
        brokerCpuMs += (pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0) - brokerBefore) * 1000;
      }
      plan.say(`cluster push ${plan.nodes}: round ${round}${counted ? '' : ' (warm-up)'}: ${late === 0 ? 'all reported' : `${plan.nodes - late} of ${plan.nodes} reported`} in ${Math.round(performance.now() - started)} ms`);
    }
    watch.close();
    await fleet.stop();
    return { latencies, missing, setupMs, brokerCpuMsPerNode: brokerCpuMs / Math.max(1, latencies.length), publishRetries, unsent };
  } finally {
    fleet?.kill();
    await cluster.stop();
    await fs.rm(rootsDir, { recursive: true, force: true });
  }
}

/** The declaration stream's leader and replicas as the cluster tells them, or why it would not. */
async function streamState(manager: JetStreamManager): Promise<string> {
  try {
    const { cluster } = await manager.streams.info(DECLARATION_STREAM);
    return `stream leader ${cluster?.leader ?? 'none'}; replicas ${(cluster?.replicas ?? []).map((peer) => `${peer.name} ${peer.current ? 'current' : 'behind'}, active ${(peer.active / 1e9).toFixed(1)} s ago`).join('; ')}`;
  } catch (error) {
    return `the stream's info was not given either (${String(error)})`;
  }
}

async function makeConsumer(manager: JetStreamManager, node: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await answeredOrMade(() => addNodeConsumer(manager, node, DeliverPolicy.All), () => manager.consumers.info(DECLARATION_STREAM, declarationConsumer(node)));
      return;
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}
