import type { BenchContext, BenchSection } from '../bench-context';
import { describeChildFailure, lastJsonLine, runChild } from '../child-measurement';
import { failed, measured, notMeasured, type Figure, type FigureHead, type Goal } from '../figure';
import type { PushMeasurement } from '../fleet/push-fleet';
import type { ClusterPushMeasurement } from './cluster-push';
import type { ServiceGap } from './service-gap';

/** The push goals of the fleet section, held to the cluster as well. */
const GOALS: Record<number, Goal> = {
  1000: { text: '≤ 1 s', max: 1000, on: 'p99' },
  10000: { text: '≤ 3 s', max: 3000, on: 'p99' },
};

/** Processes the simulated hosts run in, as in the fleet section. */
const SHARDS = 2;

/**
 * Fleet sizes pushed to on the cluster: 1,000 unless MESH_BENCH_CLUSTER_NODES lists others
 * (`1000,10000`). 10,000 nodes make 10,000 consumers of 3 replicas each; it is not in the
 * default list because on two shared cores it takes longer than the rest of the full run.
 */
function clusterSizes(): number[] {
  const listed = (process.env.MESH_BENCH_CLUSTER_NODES ?? '1000').split(',').map((each) => Number(each.trim()));
  if (!listed.every((each) => Number.isInteger(each) && each > 0)) throw new Error(`MESH_BENCH_CLUSTER_NODES lists fleet sizes, e.g. 1000,10000; got ${process.env.MESH_BENCH_CLUSTER_NODES}`);
  return listed;
}

/**
 * The cluster's figures, beside the one-server figures of the same run:
 * - push-to-applied at 1,000 simulated nodes on a 3-server cluster and, measured just before
 *   it the same way, on one server (bench/fleet's push worker); more sizes by
 *   MESH_BENCH_CLUSTER_NODES, set beside the fleet section's figure of that size when this run
 *   measured one;
 * - the gap in service when the server most hosts are linked to is killed with -9 (until each
 *   on it relinks, until each holds a declaration registered at the kill), and controller failover
 *   on the cluster, on real processes (bench/cluster/service-gap.ts).
 * Full run only: bringing a cluster, PostgreSQL, two controllers and real hosts up takes over a
 * minute before anything is measured, more than the quick run has to spare.
 */
export const clusterSection: BenchSection = {
  name: 'cluster',
  async run(ctx) {
    const sizes = clusterSizes();
    if (ctx.mode === 'quick') {
      return [
        ...sizes.map((nodes) => notMeasured(pushHead(nodes), 'full run only: a 3-server cluster with a consumer of 3 replicas per node takes minutes to bring up')),
        notMeasured(GAP_HEADS.relink, 'full run only: the real-process rig (PostgreSQL, 3 servers, 2 controllers, hosts) takes over a minute to come up'),
      ];
    }
    const figures: Figure[] = [];
    for (const nodes of sizes) figures.push(...(await pushFigures(ctx, nodes)));
    figures.push(...(await gapFigures(ctx)));
    return figures;
  },
};

function pushHead(nodes: number, where = 'a 3-server cluster'): FigureHead {
  return { id: where === 'one server' ? `cluster.push.${nodes}.one_server` : `cluster.push.${nodes}`, group: 'cluster', label: `push-to-applied, ${nodes.toLocaleString('en')} simulated nodes, ${where}`, unit: 'ms' };
}

async function pushFigures(ctx: BenchContext, nodes: number): Promise<Figure[]> {
  const rounds = nodes >= 10_000 ? 2 : 4;
  const timeoutMs = nodes >= 10_000 ? 600_000 : 180_000;
  const figures: Figure[] = [];
  const fromFleet = ctx.earlier.find((figure) => figure.id === `fleet.push.${nodes}` && figure.status === 'measured');
  if (fromFleet !== undefined && nodes >= 10_000) {
    figures.push({ ...fromFleet, ...pushHead(nodes, 'one server'), note: `the fleet section's figure of this run (fleet.push.${nodes}); ${fromFleet.note ?? ''}` });
  } else {
    ctx.say(`cluster: push-to-applied at ${nodes} nodes on one server, ${rounds - 1} counted rounds`);
    const outcome = await runChild({
      repoDir: ctx.repoDir, script: 'bench/fleet/push-worker.ts', args: [String(nodes), String(rounds), '1', String(timeoutMs), `--shards=${SHARDS}`],
      nodeFlags: ['--max-old-space-size=12288'], timeoutMs: timeoutMs * rounds + 900_000, onLine: (line) => ctx.say(`cluster: one server: ${line}`),
    });
    const one = outcome.code === 0 ? lastJsonLine<PushMeasurement>(outcome.stdout) : undefined;
    figures.push(one === undefined
      ? failed(pushHead(nodes, 'one server'), describeChildFailure('bench/fleet/push-worker.ts', outcome), GOALS[nodes])
      : measured(pushHead(nodes, 'one server'), one.latencies, { ...goalOf(nodes), note: `bench/fleet/push-worker.ts, the same rounds as the cluster row below it; nats-server ${one.brokerCpuMsPerNode.toFixed(2)} ms CPU per node per declaration${one.missing > 0 ? `; ${one.missing} reports missing at the wait` : ''}` }));
  }
  ctx.say(`cluster: push-to-applied at ${nodes} nodes on a 3-server cluster, ${rounds - 1} counted rounds`);
  const outcome = await runChild({
    repoDir: ctx.repoDir, script: 'bench/cluster/cluster-push-worker.ts', args: [String(nodes), String(rounds), String(timeoutMs), String(SHARDS)],
    nodeFlags: ['--max-old-space-size=12288'], timeoutMs: timeoutMs * rounds + 1_800_000, onLine: (line) => ctx.say(`cluster: ${line}`),
  });
  const cluster = outcome.code === 0 ? lastJsonLine<ClusterPushMeasurement>(outcome.stdout) : undefined;
  figures.push(cluster === undefined
    ? failed(pushHead(nodes), describeChildFailure('bench/cluster/cluster-push-worker.ts', outcome), GOALS[nodes])
    : measured(pushHead(nodes), cluster.latencies, {
      ...goalOf(nodes),
      note: `3 nats-servers, stream and ${nodes} consumers with 3 replicas, each host linked to the server its name falls on; the three servers spent ${cluster.brokerCpuMsPerNode.toFixed(2)} ms CPU per node per declaration in all; cluster up in ${(cluster.setupMs / 1000).toFixed(0)} s${cluster.missing > 0 ? `; ${cluster.missing} reports missing at the wait (counted at the wait, a lower bound)` : ''}${cluster.unsent > 0 ? `; ${cluster.unsent} publishes never acknowledged` : ''}${cluster.publishRetries > 0 ? `; ${cluster.publishRetries} publishes sent again` : ''}`,
    }));
  return figures;
}

function goalOf(nodes: number): { goal?: Goal } {
  const goal = GOALS[nodes];
  return goal === undefined ? {} : { goal };
}

const GAP_HEADS = {
  relink: { id: 'cluster.gap.relink', group: 'cluster', label: 'server killed (-9) under the hosts: until each host links to another', unit: 'ms' },
  applied: { id: 'cluster.gap.applied', group: 'cluster', label: 'server killed (-9) under the hosts: until each holds a declaration registered at the kill', unit: 'ms' },
  failover: { id: 'cluster.failover', group: 'cluster', label: 'acting controller killed (-9) on the cluster: until the standby serves', unit: 'ms' },
} satisfies Record<string, FigureHead>;

async function gapFigures(ctx: BenchContext): Promise<Figure[]> {
  const hosts = 5;
  const serverKills = 3;
  const controllerKills = 3;
  ctx.say(`cluster: service gap with ${hosts} real hosts, ${serverKills} server kills, ${controllerKills} controller kills`);
  const outcome = await runChild({
    repoDir: ctx.repoDir, script: 'bench/cluster/service-gap-worker.ts', args: [String(hosts), String(serverKills), String(controllerKills)],
    timeoutMs: 1_800_000, onLine: (line) => ctx.say(`cluster: ${line}`),
  });
  const gap = outcome.code === 0 ? lastJsonLine<ServiceGap>(outcome.stdout) : undefined;
  if (gap === undefined) {
    const why = describeChildFailure('bench/cluster/service-gap-worker.ts', outcome);
    return Object.values(GAP_HEADS).map((head) => failed(head, why));
  }
  const rig = `${hosts} real nox-mesh-host processes (default link backoff), 3 nats-servers, 2 mesh-control serve on PostgreSQL, loopback`;
  const oneServer = ctx.earlier.find((figure) => figure.id.startsWith('controller.failover') && figure.label.includes('kill -9') && figure.status === 'measured');
  return [
    measured(GAP_HEADS.relink, gap.relinkMs, { note: `${serverKills} kills of the server the hosts were linked to, each host timed; ${rig}` }),
    measured(GAP_HEADS.applied, gap.appliedMs, { note: `a new revision (together) registered at each kill: includes the controller's own move to another server and the host's relink` }),
    measured(GAP_HEADS.failover, gap.failoverMs, { note: `${controllerKills} kills at a random moment of the renewal period; the standby waits out the lease's 15 s age${oneServer?.summary === null || oneServer === undefined ? '; one server: the controller section (bench/controller/failover.ts) in a full run' : `; one server in this run: median ${oneServer.summary.median} ms (${oneServer.id})`}` }),
  ];
}
