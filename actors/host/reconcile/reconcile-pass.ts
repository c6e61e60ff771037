import type { ResourceResult } from '../../../schema/report';
import type { ReconcileReason } from '../../../machines/reconcile.machine';
import { applyContextOf, nodeNameOf, type HostContext } from '../host-context';
import { refreshLookAt } from '../adoption/refresh-look-at';
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
  return { reasons, startedAt: utcTimestamp(started), durationMs: monotonicMs() - begin, results, counts };
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
