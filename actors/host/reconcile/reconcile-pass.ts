import type { ResourceResult } from '../../../schema/report';
import type { ReconcileReason } from '../../../machines/reconcile.machine';
import { applyContextOf, nodeNameOf, type HostContext } from '../host-context';
import { refreshLookAt } from '../adoption/refresh-look-at';
import { briefingSubject } from '../adoption/briefing-subject';
import { recordCompletedReconcile } from '../launch-state/record-completed-reconcile';
import { converge } from './converge';
import { desiredResources, storedDeclaration } from './desired-resources';
import type { HostState } from '../../../schema/host-state';
import { monotonicMs } from '../../shared/time/monotonic-ms';
import { utcTimestamp } from '../../shared/time/utc-timestamp';

/** What one reconcile pass did. */
export interface PassReport {
  reasons: ReconcileReason[];
  startedAt: string;
  durationMs: number;
  results: ResourceResult[];
  /** Results counted by outcome. */
  counts: Partial<Record<ResourceResult['outcome'], number>>;
  /**
   * Keys left `kept` because adoption could not do its part (the original could not be kept,
   * the machine could not be read: a `failed` or `unknown` briefing line), not because the
   * machine's value won a conflict. Such a pass did not converge (see passFailed). Absent from
   * a report of a pass that was not run (the running host holding a machine with nothing
   * declared yet).
   */
  unresolved?: string[];
}

/**
 * True when the pass did not do what it was asked: a resource failed or was refused, or adoption
 * could not keep an original or read the machine. The CLI exits 1 on it. A `kept` conflict
 * (the machine's value wins, as adoption decided and the briefing says) is not a failure.
 */
export function passFailed(report: Pick<PassReport, 'results' | 'unresolved'>): boolean {
  return (report.unresolved ?? []).length > 0 || report.results.some((result) => result.outcome === 'failed' || result.outcome === 'refused');
}

/**
 * One pass: make the machine match what the store says it should hold (the verified
 * declaration plus any hand-applied resources), and remove what the host owns and no longer
 * holds. Aborting `signal` stops it between resources.
 */
export async function reconcilePass(host: HostContext, reasons: ReconcileReason[], signal?: AbortSignal): Promise<PassReport> {
  const started = host.now();
  const begin = monotonicMs();
  const state = host.state.current();
  const desired = desiredResources(state);
  // An overlay declaration is the minimum to be reachable: it adds, and never removes. A node
  // re-enrolling while holding its full declaration keeps what it holds until the full one comes.
  const removeUndeclared = storedKind(state) !== 'overlay';
  const results = await converge(desired, { removeUndeclared }, {
    state: host.state,
    appliers: host.appliers,
    ctx: applyContextOf(host, signal),
    adopter: host.adopter,
    now: host.now,
    nodeName: () => nodeNameOf(host),
  });
  await refreshLookAt(host.state);
  // A pass that ran to its end is this binary proving it works on this machine (seed: "the
  // version … the host wrote the last time it completed a reconcile"): the launcher's counter is
  // cleared and this version becomes the one to roll back to (launcher/README.md). A resource
  // that failed is the machine's or the declaration's trouble, not the binary's: counting it
  // would have the launcher roll back, then halt, a healthy host on its next few restarts.
  if (signal?.aborted !== true) await recordCompletedOnce(host);
  const counts: PassReport['counts'] = {};
  for (const result of results) counts[result.outcome] = (counts[result.outcome] ?? 0) + 1;
  const unresolved = unresolvedKeys(results, host.state.current());
  return { reasons, startedAt: utcTimestamp(started), durationMs: monotonicMs() - begin, results, counts, unresolved };
}

/** The `kept` results whose briefing line says adoption failed or could not read the machine. */
function unresolvedKeys(results: readonly ResourceResult[], state: HostState): string[] {
  const kept = results.filter((result) => result.outcome === 'kept');
  if (kept.length === 0) return [];
  const status = new Map((state.briefing?.lines ?? []).map((line) => [line.subject, line.status]));
  return kept
    .filter((result) => {
      const line = status.get(briefingSubject(result.key));
      return line === 'failed' || line === 'unknown';
    })
    .map((result) => result.key);
}

function storedKind(state: HostState): string | undefined {
  return state.last_declaration === null ? undefined : storedDeclaration(state)?.kind;
}

// Hosts whose launch state this process has already cleared. The launcher writes the counter
// only when a process starts, so once this process has cleared it, later passes would read and
// remove nothing: one clear per process, not three file operations on every pass.
const cleared = new WeakSet<HostContext>();

async function recordCompletedOnce(host: HostContext): Promise<void> {
  if (cleared.has(host)) return;
  await recordCompletedReconcile(host.settings.stateDir);
  cleared.add(host);
}
