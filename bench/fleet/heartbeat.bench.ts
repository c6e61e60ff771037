import { byMode, type BenchSection } from '../bench-context';
import { describeChildFailure, lastJsonLine, runChild } from '../child-measurement';
import { failed, floorOf, measured, type Figure, type FigureHead } from '../figure';
import type { HeartbeatMeasurement } from './heartbeat-load';

/** The host's heartbeat period. */
const INTERVAL_MS = 30_000;

/**
 * Heartbeat load on the real controller (see heartbeat-load.ts): 1,000 nodes for 60 s in the
 * quick run, 10,000 for ten minutes in the full one.
 */
export const heartbeatSection: BenchSection = {
  name: 'heartbeat',
  async run(ctx) {
    const nodes = byMode(ctx, 1000, 10_000);
    const durationMs = byMode(ctx, 60_000, 600_000);
    const sampleEveryMs = byMode(ctx, 10_000, 30_000);
    const size = nodes.toLocaleString('en');
    const heads = {
      serve: { id: `heartbeat.${nodes}.serve_cpu`, group: 'heartbeat', label: `heartbeats of ${size} nodes every 30 s: mesh-control serve CPU (% of one core)`, unit: '%' },
      store: { id: `heartbeat.${nodes}.store_cpu`, group: 'heartbeat', label: `… PostgreSQL CPU (% of one core)`, unit: '%' },
      broker: { id: `heartbeat.${nodes}.broker_cpu`, group: 'heartbeat', label: `… nats-server CPU (% of one core)`, unit: '%' },
      lag: { id: `heartbeat.${nodes}.lag`, group: 'heartbeat', label: `… lag, sent_at → last_seen_at recorded`, unit: 'ms' },
      silent: { id: `heartbeat.${nodes}.wrongly_silent`, group: 'heartbeat', label: `… nodes wrongly shown as not heard from`, unit: 'count' },
    } satisfies Record<string, FigureHead>;
    ctx.say(`heartbeat: ${nodes} nodes every ${INTERVAL_MS / 1000} s for ${durationMs / 1000} s against mesh-control serve`);
    const outcome = await runChild({
      repoDir: ctx.repoDir,
      script: 'bench/fleet/heartbeat-worker.ts',
      args: [nodes, durationMs, INTERVAL_MS, sampleEveryMs].map(String),
      nodeFlags: ['--max-old-space-size=12288'],
      timeoutMs: durationMs + 900_000,
      onLine: (line) => ctx.say(`heartbeat: ${line}`),
    });
    const measurement = outcome.code === 0 ? lastJsonLine<HeartbeatMeasurement>(outcome.stdout) : undefined;
    if (measurement === undefined) {
      const why = describeChildFailure('bench/fleet/heartbeat-worker.ts', outcome);
      return Object.values(heads).map((head) => failed(head, why));
    }
    const every = `read every ${sampleEveryMs / 1000} s over ${durationMs / 1000} s`;
    const figures: Figure[] = [
      measured(heads.serve, measurement.serveCpu, { note: `from /proc/<pid>/stat of the serve process, ${every}; store PostgreSQL 15 (the fleet store, durability off as in the tests)` }),
      measured(heads.store, measurement.storeCpu, { note: 'the postmaster and its backends' }),
      measured(heads.broker, measurement.brokerCpu, { note: `${measurement.sent} heartbeats in all, each node on its own pinned TLS connection with its own nkey` }),
      measured(heads.lag, measurement.lags.length > 0 ? measurement.lags : [Number.NaN], {
        floor: floorOf('raw NATS request/reply, one at a time', measurement.floor),
        note: `each change of a node's last_seen_at in the store against the heartbeat it came from; ${measurement.nodesVerb}; setup ${(measurement.setupMs / 1000).toFixed(0)} s`,
      }),
      measured(heads.silent, [measurement.wronglySilent], { goal: { text: '0', max: 0, on: 'median' }, note: `a node counts once if at any reading its last_seen_at was over ${INTERVAL_MS / 1000 + 10} s old while it was sending` }),
    ];
    return figures;
  },
};
