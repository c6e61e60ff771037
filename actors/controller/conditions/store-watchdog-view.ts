import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { KV } from '@nats-io/kv';
import { ControlCall } from '../../../schema/control-call';
import type { DoctorReport } from '../../../schema/doctor';
import type { HostKind } from '../../../schema/resource';
import type { Sql } from '../store/sql-store';
import type { BusAdvisory, HeardNode, OpenPlan, RunningCall, StaleRefusal, UnreportedSend, WatchdogView } from './watchdog-view';

/** Where the serving controller's view reads from. */
export interface StoreWatchdogViewSources {
  store: Sql;
  /** The calls bucket. */
  calls: KV;
  doctorLast(): DoctorReport | undefined;
  /** The broker's advisories heard (S9); the row cannot see without it. */
  advisories?: { standing(): Promise<BusAdvisory[]> };
  /** When this controller began watching. */
  since: Date;
}

/** The watchdog's view of the serving controller, and how to stop measuring its event loop. */
export interface StoreWatchdogView extends WatchdogView {
  close(): void;
}

/**
 * The watchdog's view over the store, the calls bucket, the doctor's board and the process's
 * own event loop delay. Calls known to have ended are remembered, so each look reads only the
 * calls that may still be running, not the whole bucket.
 */
export function storeWatchdogView(sources: StoreWatchdogViewSources): StoreWatchdogView {
  const ended = new Set<string>();
  const delay: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  return {
    watchingSince: () => sources.since,
    heardNodes: async (): Promise<HeardNode[]> => {
      const rows = await sources.store.query<{ name: string; kind: string; heard_at: Date | string }>(
        `SELECT name,
                CASE WHEN COALESCE(host_kind, profile->>'host_kind') = 'episodic' THEN 'episodic' ELSE 'resident' END AS kind,
                COALESCE(last_seen_at, enrolled_at, created_at) AS heard_at
           FROM nodes WHERE lifecycle_state IN ('enrolled', 'disconnected') ORDER BY name`,
      );
      return rows.map((row) => ({ name: row.name, kind: row.kind as HostKind, heardAt: new Date(row.heard_at) }));
    },
    unreportedSends: async (): Promise<UnreportedSend[]> => {
      const rows = await sources.store.query<{ name: string; kind: string; lifecycle_state: string; generation: number | string; sent_at: Date | string }>(
        `SELECT n.name, CASE WHEN COALESCE(n.host_kind, n.profile->>'host_kind') = 'episodic' THEN 'episodic' ELSE 'resident' END AS kind,
                n.lifecycle_state, d.generation, d.sent_at
           FROM nodes n
           JOIN LATERAL (SELECT generation, sent_at FROM declarations WHERE node = n.name ORDER BY generation DESC LIMIT 1) d ON true
          WHERE n.lifecycle_state IN ('enrolled', 'disconnected')
            AND n.declaration_generation > COALESCE(n.report_generation, 0)
            AND (n.report_generation IS NULL OR n.report_generation < d.generation)
          ORDER BY n.name`,
      );
      return rows.map((row) => ({ node: row.name, kind: row.kind as HostKind, lifecycleState: row.lifecycle_state, generation: Number(row.generation), sentAt: new Date(row.sent_at) }));
    },
    runningCalls: async (): Promise<RunningCall[]> => {
      const running: RunningCall[] = [];
      const keys: string[] = [];
      for await (const key of await sources.calls.keys()) if (!ended.has(key)) keys.push(key);
      for (const key of keys) {
        const entry = await sources.calls.get(key);
        if (entry === null || entry.operation !== 'PUT') continue;
        let parsed;
        try {
          parsed = ControlCall.safeParse(entry.json());
        } catch {
          continue;
        }
        if (!parsed.success) continue;
        if (parsed.data.state !== 'running') ended.add(key);
        else running.push({ id: parsed.data.id, verb: parsed.data.verb, startedAt: new Date(parsed.data.started_at) });
      }
      return running;
    },
    openPlans: async (): Promise<OpenPlan[]> => {
      const rows = await sources.store.query<{ id: number | string; module: string; version: string; state: string; context: { first?: string | null; sent?: Record<string, { at?: string }> }; note: string | null; updated_at: Date | string }>(
        'SELECT id, module, version, state, context, note, updated_at FROM plans WHERE ended_at IS NULL ORDER BY id',
      );
      return rows.map((row) => {
        const first = row.context.first ?? null;
        const firstSentAt = first === null ? undefined : row.context.sent?.[first]?.at;
        // Awaiting its first machine, the tier began with that machine's send; any other tier with the plan's last write.
        const tierSince = row.state === 'awaitingFirst' && firstSentAt !== undefined ? new Date(firstSentAt) : new Date(row.updated_at);
        return { id: Number(row.id), module: row.module, version: row.version, state: row.state, tierSince, first, note: row.note };
      });
    },
    staleRefusals: async (): Promise<StaleRefusal[]> => {
      const rows = await sources.store.query<{ node: string; reason: string; count: number | string; first_at: Date | string; last_at: Date | string; reported_at: Date | string | null }>(
        `SELECT r.node, r.reason, r.count, r.first_at, r.last_at, n.reported_at
           FROM report_refusals r JOIN nodes n ON n.name = r.node
          WHERE r.reason IN ('older', 'duplicate') AND n.lifecycle_state IN ('enrolled', 'disconnected')
            AND (n.reported_at IS NULL OR r.last_at > n.reported_at)
          ORDER BY r.node, r.reason`,
      );
      return rows.map((row) => {
        const first = new Date(row.first_at).getTime();
        const reported = row.reported_at === null ? -Infinity : new Date(row.reported_at).getTime();
        return { node: row.node, reason: row.reason, count: Number(row.count), since: new Date(Math.max(first, reported)), lastAt: new Date(row.last_at) };
      });
    },
    busAdvisories: () => {
      if (sources.advisories === undefined) return Promise.reject(new Error('the controller is not listening to the broker\'s advisories'));
      return sources.advisories.standing();
    },
    doctorLast: () => Promise.resolve(sources.doctorLast()),
    eventLoopHeldMs: () => {
      const held = delay.max / 1e6;
      delay.reset();
      return Promise.resolve(held);
    },
    close: () => delay.disable(),
  };
}
