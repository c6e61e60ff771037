import { setTimeout as sleep } from 'node:timers/promises';
import { ready } from '../../shared/crypto/sodium';
import { openHost, type HostContext, type HostParts, type HostSettings } from '../host-context';
import { clearRestartDue } from '../launch-state/restart-due';
import type { AdmissionRules } from '../link/admit-declaration';
import type { RetryPolicy } from '../link/retry-delay';
import { StoreInconsistent } from '../reconcile/desired-resources';
import { StoreLocked } from '../store/store-errors';
import { runEnrolledSession } from './enrolled-session';
import type { HostLog } from './host-log';
import { claimPidfile } from './pidfile';
import { waitForIdentity } from './wait-for-identity';

/** What the host process runs with. */
export interface RunHostOptions {
  settings: HostSettings;
  parts: HostParts;
  rules: AdmissionRules;
  log: HostLog;
  /** Aborted by SIGTERM or SIGINT: the host stops between resources and exits. */
  signal: AbortSignal;
  /** How often a hosted machine looks for an identity when no change is noticed (default 3 s). */
  pollMs?: number;
  retry?: RetryPolicy;
  driftIntervalMs?: number;
}

const DEFAULT_POLL_MS = 3000;

/**
 * The host process, `nox-mesh-host run`: claims the pidfile (where a rouse finds it), and then,
 * for as long as it runs, is one of two things. Hosted — no identity — it holds nothing, not
 * even the store lock, so `nox-mesh-host enrol` can run beside it, and it looks for an identity
 * whenever the state directory changes. Enrolled, it holds the store and runs the node (see
 * runEnrolledSession) until it is stopped or released, and then is hosted again.
 *
 * It only ever dials out: there is no listening socket, and a rouse will be a signal.
 */
export async function runHost(options: RunHostOptions): Promise<void> {
  const { settings, log, signal } = options;
  await ready();
  const pidfile = await claimPidfile(settings.stateDir);
  // Left by a host that installed this version and died before it could exit: done already.
  await clearRestartDue(settings.stateDir);
  try {
    let toldLocked = false;
    while (!signal.aborted) {
      let host: HostContext;
      try {
        host = await openHost(settings, options.parts);
      } catch (error) {
        // `enrol` holds the store while it works; it lets go in moments.
        if (!(error instanceof StoreLocked)) throw error;
        if (!toldLocked) log.say(`waiting for the store: ${error.message}`);
        toldLocked = true;
        await sleep(500, undefined, { signal }).catch(() => undefined);
        continue;
      }
      toldLocked = false;
      let open = true;
      try {
        if (host.storeProblem !== undefined) log.say(`warning: ${host.storeProblem}`);
        const identity = host.state.current().identity;
        if (identity === null) {
          await host.close();
          open = false;
          log.say(`hosted: this machine has no identity yet; waiting for nox-mesh-host enrol --token … (state in ${settings.stateDir})`);
          await waitForIdentity(settings.stateDir, signal, options.pollMs ?? DEFAULT_POLL_MS);
          continue;
        }
        const pins = host.state.current().pins;
        if (pins === null) {
          throw new StoreInconsistent(`the host store holds the identity of node ${identity.node} but no broker or controller key`, {
            next: 're-enrol this machine (nox-mesh-host enrol --token …) so they are pinned again',
          });
        }
        log.say(`enrolled as node ${identity.node}; reaching the broker at ${pins.broker_url}`);
        const end = await runEnrolledSession({
          host,
          rules: options.rules,
          log,
          ...(options.retry === undefined ? {} : { retry: options.retry }),
          ...(options.driftIntervalMs === undefined ? {} : { driftIntervalMs: options.driftIntervalMs }),
        }, signal);
        // A new version of the host is installed: exit 0, and the launcher starts it.
        if (end === 'restart') break;
      } finally {
        if (open) await host.close();
      }
    }
    log.say('stopped');
  } finally {
    await pidfile.release();
  }
}
