import os from 'node:os';
import { byMode, type BenchSection } from '../bench-context';
import { describeChildFailure, lastJsonLine, runChild } from '../child-measurement';
import { failed, floorOf, measured, type Figure, type FigureHead, type Goal } from '../figure';
import type { PushMeasurement } from './push-fleet';
import { CONTROLLER_PATIENCE } from './publish-declaration';

/** The goals of the issue, by fleet size. */
const GOALS: Record<number, Goal> = {
  1000: { text: '≤ 1 s', max: 1000, on: 'p99' },
  10000: { text: '≤ 3 s', max: 3000, on: 'p99' },
};

/**
 * Processes the simulated hosts run in, one per core: on one JavaScript thread a thousand hosts
 * queue behind each other, which measures the simulator rather than the mesh.
 */
const SHARDS = 2;

interface SizePlan {
  nodes: number;
  /** Rounds in all; the first is a warm-up, not counted, unless `warmUp` is false. */
  rounds: number;
  warmUp?: boolean;
  floorRounds: number;
  timeoutMs: number;
  /** Processes the simulated hosts are spread over. */
  shards: number;
}

/**
 * Push-to-applied across simulated fleets of 1, 100, 1,000 and (full run) 10,000 nodes, each
 * size in a process of its own (bench/fleet/push-worker.ts, see push-fleet.ts), with the raw
 * NATS floor at the same size beside it.
 */
export const pushSection: BenchSection = {
  name: 'fleet',
  async run(ctx) {
    const plans: SizePlan[] = byMode<SizePlan[]>(ctx, [
      { nodes: 1, rounds: 21, floorRounds: 50, timeoutMs: 30_000, shards: SHARDS },
      { nodes: 100, rounds: 4, floorRounds: 1, timeoutMs: 60_000, shards: SHARDS },
      { nodes: 1000, rounds: 1, warmUp: false, floorRounds: 1, timeoutMs: 120_000, shards: SHARDS },
    ], [
      { nodes: 1, rounds: 101, floorRounds: 200, timeoutMs: 30_000, shards: SHARDS },
      { nodes: 100, rounds: 11, floorRounds: 5, timeoutMs: 60_000, shards: SHARDS },
      { nodes: 1000, rounds: 5, floorRounds: 3, timeoutMs: 180_000, shards: SHARDS },
      { nodes: 10_000, rounds: 3, floorRounds: 1, timeoutMs: 600_000, shards: SHARDS },
    ]);
    const figures: Figure[] = [];
    for (const plan of plans) {
      const head: FigureHead = { id: `fleet.push.${plan.nodes}`, group: 'fleet', label: `push-to-applied, ${plan.nodes.toLocaleString('en')} simulated node${plan.nodes === 1 ? '' : 's'}`, unit: 'ms' };
      const goal = GOALS[plan.nodes];
      const counted = plan.warmUp === false ? plan.rounds : plan.rounds - 1;
      ctx.say(`fleet: push-to-applied at ${plan.nodes} nodes, ${counted} counted round${counted === 1 ? '' : 's'}`);
      const outcome = await runChild({
        repoDir: ctx.repoDir,
        script: 'bench/fleet/push-worker.ts',
        args: [...[plan.nodes, plan.rounds, plan.floorRounds, plan.timeoutMs].map(String), `--shards=${plan.shards}`, ...(plan.warmUp === false ? ['--no-warm-up'] : [])],
        nodeFlags: ['--max-old-space-size=12288'],
        timeoutMs: plan.timeoutMs * plan.rounds + 900_000,
        onLine: (line) => ctx.say(`fleet: ${line}`),
      });
      const measurement = outcome.code === 0 ? lastJsonLine<PushMeasurement>(outcome.stdout) : undefined;
      if (measurement === undefined) {
        figures.push(failed(head, describeChildFailure('bench/fleet/push-worker.ts', outcome), goal));
        continue;
      }
      const shared = plan.nodes === 1
        ? 'one SimulatedHost (the host\'s intake, gate, store, reconcile actor and report) on its own connection, in a process of its own'
        : `${plan.nodes} SimulatedHosts in ${measurement.shards} process${measurement.shards === 1 ? '' : 'es'}, sharing this machine's cores with nats-server and the controller's sends: per node per declaration the hosts spent ${measurement.simulatorCpuMsPerNode.toFixed(1)} ms CPU, the sends and report watch ${measurement.controllerCpuMsPerNode.toFixed(1)} ms and nats-server ${measurement.brokerCpuMsPerNode.toFixed(2)} ms, and each node's connection took ${measurement.messagesInPerNode.toFixed(1)} messages in and sent ${measurement.messagesOutPerNode.toFixed(1)}`;
      const trouble = [
        measurement.missing > 0 ? `${measurement.missing} reports had not come when the round's ${(plan.timeoutMs / 1000).toFixed(0)} s wait ran out, each counted from its send to the end of the wait (a lower bound)` : '',
        measurement.publishRetries > 0 ? `${measurement.publishRetries} publishes sent again (no acknowledgement in ${CONTROLLER_PATIENCE.ackWaitMs / 1000} s, or a passing refusal)` : '',
      ].filter((part) => part !== '');
      figures.push(measured(head, measurement.latencies, {
        ...(goal === undefined ? {} : { goal }),
        floor: floorOf(plan.nodes === 1 ? 'raw NATS request/reply, one at a time' : `${plan.nodes} raw NATS request/replies at once`, measurement.floor),
        note: `publish to the stream → report received${plan.warmUp === false ? ' (the first push, no warm-up round)' : ''}; ${shared}; fleet up in ${(measurement.setupMs / 1000).toFixed(0)} s, ${Math.round(measurement.rssMb)} MB; ${loadNote(measurement.loadAverages)}${trouble.length === 0 ? '' : `; ${trouble.join('; ')}`}`,
      }));
    }
    return figures;
  },
};

/**
 * The machine's load as the counted rounds began: the CPU per node moves with it, so a figure is
 * compared with another run's only beside it.
 */
function loadNote(loads: readonly number[] | undefined): string {
  if (loads === undefined || loads.length === 0) return 'load average not read';
  const low = Math.min(...loads);
  const high = Math.max(...loads);
  const cores = os.availableParallelism();
  return `load average ${low === high ? low.toFixed(1) : `${low.toFixed(1)} to ${high.toFixed(1)}`} as the counted round${loads.length === 1 ? '' : 's'} began, on ${cores} core${cores === 1 ? '' : 's'}`;
}
