import { promises as fs } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuthorizationError, type NatsConnection } from '@nats-io/transport-node';
import { canonicalJson } from '../../schema/canonical';
import { Heartbeat } from '../../schema/heartbeat';
import { parseContract } from '../../schema/parse';
import { listEveryNode } from '../../actors/controller/nodes/list-every-node';
import { callController } from '../../actors/controller/control/call-controller';
import { startServeProcess, type ServeProcess } from '../../actors/controller/serve/testing/serve-process';
import { startTestMesh, type TestMesh } from '../../actors/controller/serve/testing/test-mesh';
import { upsertNode } from '../../actors/controller/store/nodes.repo';
import { openStore } from '../../actors/controller/store/open-store';
import type { SqlStore } from '../../actors/controller/store/sql-store';
import { heartbeatSubject } from '../../actors/shared/bus/subjects';
import { startTestPostgres, type TestPostgres } from '../../actors/shared/testing/test-postgres';
import { runningVersion } from '../../actors/shared/version';
import { MeshWatch } from '../enrolment/mesh-watch';
import { cpuSeconds, treeCpuSeconds } from '../proc-stat';
import { sequentialFloor } from './nats-floor';
import { connectMember, fleetMembers, inBatches, probeFleetBroker, type FleetMember } from './fleet-member';

/** What one heartbeat load is asked to do. */
export interface HeartbeatPlan {
  nodes: number;
  /** How long the load runs, ms. */
  durationMs: number;
  /** Every node's heartbeat period, ms (the host's is 30 s). */
  intervalMs: number;
  /** How often CPU and the store are read, ms. */
  sampleEveryMs: number;
  say(line: string): void;
}

/** What a heartbeat load measured. */
export interface HeartbeatMeasurement {
  /** `mesh-control serve`'s CPU over each sample period, % of one core. */
  serveCpu: number[];
  /** PostgreSQL's (postmaster and backends) over each sample period, % of one core. */
  storeCpu: number[];
  /** nats-server's over each sample period, % of one core. */
  brokerCpu: number[];
  /** For each heartbeat recorded: the store's last_seen_at minus the heartbeat's sent_at, ms. */
  lags: number[];
  /** Nodes that at some reading had been silent, by the store, longer than their period and 10 s. */
  wronglySilent: number;
  /** Heartbeats sent in all. */
  sent: number;
  /** Raw request/reply round trips on the same broker, one at a time, ms. */
  floor: number[];
  /** Whether `mesh-control nodes` (the verb nodes.list) answered at this size, and if not why. */
  nodesVerb: string;
  setupMs: number;
}

/** A heartbeat a node sends: its contract checked, canonical JSON, as the host's sender makes it. */
function heartbeatBytes(node: string, sentAt: Date, uptimeSeconds: number): string {
  return canonicalJson(parseContract(Heartbeat, {
    node,
    sent_at: sentAt.toISOString(),
    version_running: runningVersion(),
    host_kind: 'resident',
    seconds_since_linked: 0,
    last_reconcile_at: null,
    uptime_seconds: Math.round(uptimeSeconds),
  }, 'heartbeat'));
}

/**
 * `plan.nodes` simulated nodes heartbeating against the real controller: a mesh made as
 * `mesh-control init --database` makes it, on a real PostgreSQL (the store for fleets), every
 * node recorded in it as enrolled with its own identity, then `mesh-control serve` started as
 * its own process, which lets every node's nkey into the broker in one reload. Each node opens
 * its own pinned connection and sends a heartbeat every `intervalMs`, first at a random point of
 * its first period, so they arrive spread as a fleet's do. Read every `sampleEveryMs`: the CPU
 * of serve, of PostgreSQL and of nats-server, and every node's last_seen_at from the store —
 * the column `mesh-control nodes` shows.
 */
export async function measureHeartbeats(plan: HeartbeatPlan): Promise<HeartbeatMeasurement> {
  const setupStarted = performance.now();
  let postgres: TestPostgres | undefined;
  let mesh: TestMesh | undefined;
  let serve: ServeProcess | undefined;
  let store: SqlStore | undefined;
  let watch: MeshWatch | undefined;
  const connections: NatsConnection[] = [];
  const timers: NodeJS.Timeout[] = [];
  try {
    postgres = await startTestPostgres();
    mesh = await startTestMesh({ database: postgres.url });
    const members = fleetMembers(plan.nodes, 'hb');
    plan.say(`heartbeats ${plan.nodes}: recording ${plan.nodes} enrolled nodes in the store`);
    store = await openStore({ url: postgres.url });
    const enrolledAt = new Date();
    const recording = store;
    await recording.transaction(async (tx) => {
      for (const member of members) {
        await upsertNode(tx, { name: member.name, lifecycle_state: 'enrolled', public_key: member.identity.public_key, nkey: member.identity.nkey_public, version_running: runningVersion(), enrolled_at: enrolledAt }, enrolledAt);
      }
    });

    plan.say(`heartbeats ${plan.nodes}: starting mesh-control serve`);
    serve = startServeProcess(mesh.dir);
    await serve.waitFor(/serving: epoch \d+/, 120_000);
    const broker = await probeFleetBroker(mesh.config.broker.url, mesh.config.broker.fingerprint);
    // The node users are written by serve's broker child once it holds the lease: until that
    // reload, the broker refuses them.
    const first = members[0] as FleetMember;
    for (let attempt = 0; ; attempt += 1) {
      try {
        connections.push(await connectMember(first, broker));
        break;
      } catch (error) {
        if (!(error instanceof AuthorizationError) || attempt > 300) throw error;
        await sleep(100);
      }
    }
    plan.say(`heartbeats ${plan.nodes}: connecting ${plan.nodes} nodes`);
    connections.push(...(await inBatches(members.slice(1), 32, (member) => connectMember(member, broker))));
    watch = await MeshWatch.open(mesh.dir);
    await watch.nc.flush();
    const floor = await sequentialFloor(first.name, connections[0] as NatsConnection, 50, new Uint8Array(256));
    const setupMs = performance.now() - setupStarted;

    plan.say(`heartbeats ${plan.nodes}: every node every ${plan.intervalMs / 1000} s for ${plan.durationMs / 1000} s`);
    const sentTimes = members.map(() => [] as number[]);
    let sent = 0;
    const loadStarted = Date.now();
    const loadEnds = loadStarted + plan.durationMs;
    members.forEach((member, index) => {
      const connection = connections[index] as NatsConnection;
      const beat = (): void => {
        if (Date.now() >= loadEnds) return;
        const now = new Date();
        connection.publish(heartbeatSubject(member.name), heartbeatBytes(member.name, now, (now.getTime() - loadStarted) / 1000));
        sentTimes[index]?.push(now.getTime());
        sent += 1;
      };
      const firstAfter = Math.random() * plan.intervalMs;
      timers.push(setTimeout(() => {
        beat();
        timers.push(setInterval(beat, plan.intervalMs));
      }, firstAfter));
    });

    const servePid = serve.child.pid as number;
    const postmasterPid = Number((await fs.readFile(path.join(postgres.socketDir, 'data', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const serveCpu: number[] = [];
    const storeCpu: number[] = [];
    const brokerCpu: number[] = [];
    const lags: number[] = [];
    const silent = new Set<string>();
    const seenAt = new Map<string, number>();
    let last = { at: performance.now(), serve: cpuSeconds(servePid), store: treeCpuSeconds(postmasterPid), broker: cpuSeconds(mesh.broker.pid) };
    while (Date.now() < loadEnds) {
      await sleep(Math.min(plan.sampleEveryMs, Math.max(0, loadEnds - Date.now())));
      const now = { at: performance.now(), serve: cpuSeconds(servePid), store: treeCpuSeconds(postmasterPid), broker: cpuSeconds(mesh.broker.pid) };
      const wallSeconds = (now.at - last.at) / 1000;
      serveCpu.push(((now.serve - last.serve) / wallSeconds) * 100);
      storeCpu.push(((now.store - last.store) / wallSeconds) * 100);
      brokerCpu.push(((now.broker - last.broker) / wallSeconds) * 100);
      last = now;

      const readAt = Date.now();
      const rows = await recording.query<{ name: string; last_seen_at: Date | null }>('SELECT name, last_seen_at FROM nodes ORDER BY name');
      const byName = new Map(rows.map((row) => [row.name, row.last_seen_at === null ? null : new Date(row.last_seen_at).getTime()]));
      members.forEach((member, index) => {
        const lastSeen = byName.get(member.name) ?? null;
        const times = sentTimes[index] ?? [];
        // Silent by the store although the node has been sending: the listing would say
        // "last seen" longer ago than a heartbeat period and some slack.
        const sentLong = times.some((time) => time <= readAt - 10_000);
        if (sentLong && (lastSeen === null || lastSeen < readAt - plan.intervalMs - 10_000)) silent.add(member.name);
        if (lastSeen === null || lastSeen === seenAt.get(member.name)) return;
        seenAt.set(member.name, lastSeen);
        // The heartbeat recorded is the latest sent before it was recorded.
        const source = times.filter((time) => time <= lastSeen).at(-1);
        if (source !== undefined && source >= loadStarted) lags.push(lastSeen - source);
      });
      plan.say(`heartbeats ${plan.nodes}: ${Math.round((readAt - loadStarted) / 1000)} s: ${sent} sent; serve ${serveCpu.at(-1)?.toFixed(1)} % CPU, store ${storeCpu.at(-1)?.toFixed(1)} %, broker ${brokerCpu.at(-1)?.toFixed(1)} %; ${silent.size} silent`);
    }
    for (const timer of timers) clearTimeout(timer);

    let nodesVerb: string;
    try {
      // Page by page, as the CLI reads them.
      const dir = mesh.dir;
      const listed = (await listEveryNode((args) => callController(dir, 'nodes.list', args, { timeoutMs: 60_000 }))).length;
      nodesVerb = `\`mesh-control nodes\` listed ${listed} nodes`;
    } catch (error) {
      nodesVerb = `\`mesh-control nodes\` failed at this size: ${(error as Error).message.split('\n')[0]}`;
    }
    return { serveCpu, storeCpu, brokerCpu, lags, wronglySilent: silent.size, sent, floor, nodesVerb, setupMs };
  } finally {
    for (const timer of timers) clearTimeout(timer);
    await inBatches(connections, 64, (connection) => connection.close().catch(() => undefined));
    await watch?.close();
    if (serve !== undefined && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill('SIGTERM');
      const ended = await Promise.race([serve.exited.then(() => true), sleep(15_000, false)]);
      if (!ended) serve.child.kill('SIGKILL');
    }
    await store?.close();
    await mesh?.stop();
    await postgres?.stop();
  }
}
