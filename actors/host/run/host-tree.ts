import { runRootSupervisor, type RootSupervisor } from '../../shared/supervisor/run-root-supervisor';
import { supervise, type SupervisorSpec } from '../../shared/supervisor/supervise';
import type { SupervisorEscalated } from '../../shared/supervisor/supervisor-escalated';
import { HostLifecycle, type HostLifecycleOptions } from './host-lifecycle.actor';
import { messageOf } from '../../shared/message-of';
import { timestampOrNull, utcTimestamp } from '../../shared/time/utc-timestamp';
import { StatusWriter, writeHostStatus, type HostStatus } from './host-status';

/** The root supervisor's limits: the lifecycle failing more than three times a minute stops the host. */
export const HOST_SUPERVISION: Pick<SupervisorSpec, 'maxRestarts' | 'windowMs' | 'backoff'> = {
  maxRestarts: 3,
  windowMs: 60_000,
  backoff: { baseMs: 500, maxMs: 10_000 },
};

/** What the host's tree runs with: the lifecycle's work, less the hooks the tree gives it itself. */
export interface HostTreeOptions extends Omit<HostLifecycleOptions, 'fail' | 'restartDue' | 'changed'> {
  /** Aborted by SIGTERM or SIGINT: the host stops between resources. */
  signal: AbortSignal;
  /** Hears the tree once it runs. */
  onStarted?: (tree: HostTree) => void;
  /** When the host process started, for its status. */
  startedAt: Date;
}

/** The running tree: its root, and the lifecycle's work. */
export interface HostTree {
  root: RootSupervisor;
  lifecycle: HostLifecycle;
}

/**
 * Why the tree ended: the host is stopping, or it has installed a new version of itself and
 * exits so the launcher starts that one, or its revoked identity was replaced by enrolling
 * again and a new tree takes the new one up.
 */
export type HostTreeEnd = 'stopped' | 'restart' | 'identity-replaced';

/**
 * The host as a supervision tree, from the moment the machine may be a node:
 *
 * ```
 * host                  root supervisor
 * └─ lifecycle          the lifecycle machine (host-lifecycle.actor.ts), permanent
 *    └─ node            spawned while this machine is a node (node-children.ts)
 *       ├─ link
 *       ├─ intake
 *       ├─ heartbeats
 *       └─ reconcile
 * ```
 *
 * Ends when `signal` aborts or a new version is due: the node's work stops between resources
 * and sends what is queued, then the tree stops and the store is closed. Throws what stopped it
 * otherwise: a store that cannot be used, or the root giving up on the lifecycle.
 */
export async function runHostTree(options: HostTreeOptions): Promise<HostTreeEnd> {
  const { signal } = options;
  let failure: unknown;
  let restart = false;
  let replaced = false;
  let wake: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    wake = resolve;
  });
  // Composed a moment after each change, by when the root and the lifecycle below exist.
  const status = new StatusWriter(options.settings.stateDir, () => composeStatus(root, lifecycle, options.startedAt), (error) => options.log.say(`could not write the status file: ${(error as Error)?.message ?? String(error)}`));
  const lifecycle = new HostLifecycle({
    changed: () => status.changed(),
    settings: options.settings,
    node: options.node,
    log: options.log,
    rouses: options.rouses,
    timings: options.timings,
    pollMs: options.pollMs,
    fail: (error) => {
      failure ??= error;
      wake();
    },
    restartDue: () => {
      restart = true;
      wake();
    },
    identityReplaced: () => {
      replaced = true;
      wake();
    },
    signal,
  });
  let escalation: SupervisorEscalated | undefined;
  const root = runRootSupervisor(
    supervise({ name: 'host', ...HOST_SUPERVISION, children: [{ id: 'lifecycle', logic: lifecycle.logic(), restart: 'permanent' }] }),
    {
      onEscalate: (given) => {
        escalation = given;
      },
      // The root gave up: the host stops with the lifecycle's last error, and the service
      // manager starts it again.
      exit: (_code, text) => {
        failure ??= escalation ?? new Error(text);
        wake();
      },
    },
  );
  // Every actor's new state (the lifecycle's, a child restarted, a pass begun or ended) is a change.
  const inspection = root.actor.system.inspect((event) => {
    if (event.type === '@xstate.snapshot') status.changed();
  });
  status.changed();
  options.onStarted?.({ root, lifecycle });
  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await Promise.race([stopped, ended]);
  // Taken now: closing lets the node's work go, and with it what the status says of the node.
  const last = composeStatus(root, lifecycle, options.startedAt);
  // The root's error names the child that kept failing and quotes its last error.
  if (failure !== undefined) options.log.say(`stopping: ${messageOf(failure)}`);
  try {
    await lifecycle.close();
  } finally {
    await root.stop();
    inspection.unsubscribe();
    await status.flushed();
    // The last word of the status file: that this process has ended, and why.
    const why = failure !== undefined ? messageOf(failure) : restart ? 'a new version of the host is installed: the launcher starts it' : 'asked to stop (SIGTERM or SIGINT)';
    const now = utcTimestamp(Date.now());
    await writeHostStatus(options.settings.stateDir, { ...last, written_at: now, lifecycle: 'stopped', linked_since: null, stopped: { at: now, failed: failure !== undefined, why } })
      .catch((error: unknown) => options.log.say(`could not write the status file: ${messageOf(error)}`));
  }
  if (failure !== undefined) throw failure;
  return restart ? 'restart' : replaced ? 'identity-replaced' : 'stopped';
}

/** What the running host says about itself, read from its live tree and its node's work. */
export function composeStatus(root: RootSupervisor, lifecycle: HostLifecycle, startedAt: Date): HostStatus {
  const tree = root.tree();
  const work = lifecycle.nodeWork();
  return {
    format: 1,
    pid: process.pid,
    started_at: utcTimestamp(startedAt),
    written_at: utcTimestamp(Date.now()),
    lifecycle: tree.children.find((child) => child.id === 'lifecycle')?.child_state ?? 'starting',
    node: work?.node ?? null,
    linked_since: timestampOrNull(work?.linkedSince ?? null),
    last_linked_at: timestampOrNull(work?.clock.lastLinkedAt() ?? null),
    last_pass: work?.lastPass ?? null,
    last_declaration: work?.lastDeclaration ?? null,
    ...(work?.revocation == null ? {} : { revoked: work.revocation }),
    ...(work?.unpinned == null ? {} : { certificate_unpinned: work.unpinned }),
    tree,
  };
}
