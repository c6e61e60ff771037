import type { Condition } from '../../../schema/condition';
import type { ConditionStore, Finding } from './condition-store';
import { PROBE_FAILED, type SignalRow } from './signals-table';
import type { WatchdogSettings } from './watchdog-settings';
import type { WatchdogView } from './watchdog-view';

/** What one look of the watchdog did. */
export interface WatchOutcome {
  raised: string[];
  changed: string[];
  cleared: string[];
  /** Rows that could not see (each raised as probe-failed). */
  blind: string[];
}

/**
 * One look of the watchdog over every row: raises what each row finds, clears the open
 * conditions of its kind it no longer finds, and for a row that cannot see raises
 * `probe-failed.<kind>` and clears nothing of that row (what it cannot see may still hold).
 * `probe-failed.<kind>` is cleared once the row sees again. A row that cannot yet tell
 * (SignalRow.canClear) raises but clears nothing. Then forgets conditions cleared more
 * than ten minutes ago.
 */
export async function watchOnce(rows: readonly SignalRow[], view: WatchdogView, store: ConditionStore, settings: WatchdogSettings, now: Date): Promise<WatchOutcome> {
  const outcome: WatchOutcome = { raised: [], changed: [], cleared: [], blind: [] };
  const kept = await store.all();
  const note = (id: string, event: string | null): void => {
    if (event === 'condition-raised') outcome.raised.push(id);
    else if (event === 'condition-changed') outcome.changed.push(id);
    else if (event === 'condition-cleared') outcome.cleared.push(id);
  };
  for (const row of rows) {
    const blindId = `${PROBE_FAILED}.${row.kind}`;
    let found: Finding[];
    try {
      found = await row.look(view, now, settings);
    } catch (error) {
      outcome.blind.push(row.kind);
      const detail = `the watchdog's row ${row.signal} (${row.watches}) cannot see: ${error instanceof Error ? error.message : String(error)}; its conditions are neither raised nor cleared until it can`;
      note(blindId, await store.raise({ id: blindId, kind: PROBE_FAILED, signal: row.signal, subject: row.kind, severity: 'urgent', detail, show: 'mesh-control doctor' }, now));
      continue;
    }
    if (kept.some((condition) => condition.id === blindId && condition.state === 'open')) note(blindId, await store.clear(blindId, now, `the row ${row.signal} sees again`));
    const ids = new Set(found.map((item) => item.id));
    for (const item of found) {
      // Unchanged since this look began: nothing to write, and no read per finding.
      const same = kept.find((condition) => condition.id === item.id);
      if (same !== undefined && same.state === 'open' && same.detail === item.detail && same.severity === item.severity && same.show === item.show) continue;
      note(item.id, await store.raise(item, now));
    }
    if (row.canClear !== undefined && !(await row.canClear(view, now, settings))) continue;
    const gone = kept.filter((condition: Condition) => condition.kind === row.kind && condition.state === 'open' && !ids.has(condition.id));
    for (const condition of gone) note(condition.id, await store.clear(condition.id, now, `no longer seen by ${row.signal}`));
  }
  await store.sweep(now, kept);
  return outcome;
}
