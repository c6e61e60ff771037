import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { KV } from '@nats-io/kv';
import { ControlCall } from '../../../schema/control-call';
import type { DoctorReport } from '../../../schema/doctor';
import type { HostKind } from '../../../schema/resource';
import type { Sql } from '../store/sql-store';
import type { HeardNode, RunningCall, UnreportedSend, WatchdogView } from './watchdog-view';

/** Where the serving controller's view reads from. */
export interface StoreWatchdogViewSources {
  store: Sql;
  /** The calls bucket. */
  calls: KV;
  doctorLast(): DoctorReport | undefined;
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
    doctorLast: () => Promise.resolve(sources.doctorLast()),
    eventLoopHeldMs: () => {
      const held = delay.max / 1e6;
      delay.reset();
      return Promise.resolve(held);
    },
    close: () => delay.disable(),
  };
}
