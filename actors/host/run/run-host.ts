import { setTimeout as sleep } from 'node:timers/promises';
import type { HostContext, HostParts, HostSettings } from '../host-context';
import { clearRestartDue } from '../launch-state/restart-due';
import type { HostKind, ResourceShape } from '../../../schema/resource';
import type { AdmissionRules } from '../link/admit-declaration';
import { StoreInconsistent } from '../reconcile/store-inconsistent';
import { StoreLocked } from '../store/store-errors';
import type { HostLog } from './host-log';
import { timingsFromEnvironment, type HostTimings } from './host-timings';
import { claimPidfile } from './pidfile';
import { signalRouses, type RouseSource } from './rouse-signal';
import { plainlyHosted, waitForIdentity } from './wait-for-identity';

/** What a node runs with: its appliers and adopter, the rules its gate admits by, what it is. */
export interface NodeSetup {
  parts: HostParts;
  rules: AdmissionRules;
  /** What this host is, for its heartbeats; unless given, read from the shapes it takes. */
  hostKind?: HostKind;
}

/** What the host process runs with. */
export interface RunHostOptions {
  settings: HostSettings;
  /**
   * The node's setup, or how to make it. Made the first time the store is opened, which a
   * machine plainly not enrolled (no store, or one whose identity is null) never does while it
   * waits: the appliers, the profile and the store's own code are loaded only then.
   */
  node: NodeSetup | (() => Promise<NodeSetup>);
  log: HostLog;
  /** Aborted by SIGTERM or SIGINT: the host stops between resources and exits. */
  signal: AbortSignal;
  /** How often a hosted machine looks for an identity when no change is noticed (default 3 s). */
  pollMs?: number;
  /** Rouses (SIGUSR1 on this process unless given). */
  rouses?: RouseSource;
  /** Timings that differ from the defaults; unless given, read from MESH_HOST_TIMINGS. */
  timings?: HostTimings;
}

const DEFAULT_POLL_MS = 3000;

/**
 * The host process, `nox-mesh-host run`: claims the pidfile (where a rouse finds it), and then,
 * for as long as it runs, is one of two things. Hosted — no identity — it holds nothing, not
 * even the store lock, so `nox-mesh-host enrol` can run beside it, and it looks for an identity
 * whenever the state directory changes. Enrolled, it holds the store and runs the node (see
 * runEnrolledSession) until it is stopped or released, and then is hosted again.
 *
 * It only ever dials out: there is no listening socket. A rouse is SIGUSR1 to the pid in the
 * pidfile, and goes to the link while enrolled.
 */
export async function runHost(options: RunHostOptions): Promise<void> {
  const { settings, log, signal } = options;
  const timings = options.timings ?? timingsFromEnvironment(process.env);
  const rouses = options.rouses ?? signalRouses();
  const pidfile = await claimPidfile(settings.stateDir);
  // Left by a host that installed this version and died before it could exit: done already.
  await clearRestartDue(settings.stateDir);
  let setup: Promise<NodeSetup> | undefined;
  const node = (): Promise<NodeSetup> => (setup ??= typeof options.node === 'function' ? options.node() : Promise.resolve(options.node));
  const waitHosted = async (): Promise<void> => {
    log.say(`hosted: this machine has no identity yet; waiting for nox-mesh-host enrol --token … (state in ${settings.stateDir})`);
    const stopListening = rouses.listen(() => log.say('rouse: not a node yet, so there is no link to rouse'));
    try {
      await waitForIdentity(settings.stateDir, signal, options.pollMs ?? DEFAULT_POLL_MS);
    } finally {
      stopListening();
    }
  };
  try {
    let toldLocked = false;
    while (!signal.aborted) {
      // Not a node, plainly: wait without loading the store's code or the node's.
      if (await plainlyHosted(settings.stateDir)) {
        await waitHosted();
        continue;
      }
      let host: HostContext;
      try {
        host = await hostCode().openHost(settings, (await node()).parts);
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
          await waitHosted();
          continue;
        }
        const pins = host.state.current().pins;
        if (pins === null) {
          throw new StoreInconsistent(`the host store holds the identity of node ${identity.node} but no broker or controller key`, {
            next: 're-enrol this machine (nox-mesh-host enrol --token …) so they are pinned again',
          });
        }
        log.say(`enrolled as node ${identity.node}; reaching the broker at ${pins.broker_url}`);
        const { runEnrolledSession } = await nodeCode();
        const { rules, hostKind } = await node();
        const end = await runEnrolledSession({
          host,
          rules,
          log,
          hostKind: hostKind ?? hostKindOf(rules.shapes),
          rouses,
          timings,
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

/**
 * The store's code (and with it the contracts and zod), loaded when the store is first opened: a
 * machine plainly waiting to be enrolled needs none of it.
 */
function hostCode(): typeof import('../host-context') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../host-context') as typeof import('../host-context');
}

/**
 * The code of a node, loaded the first time this machine is one: the NATS client, the link and
 * the reconcile actor. A machine waiting to be enrolled needs none of it, and in the bundle what
 * is never required is never evaluated. Signatures are checked with Node's own Ed25519
 * (actors/shared/crypto/ed25519.ts), so no host process loads libsodium; see
 * hosted-footprint.test.ts.
 */
async function nodeCode(): Promise<typeof import('./enrolled-session')> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./enrolled-session') as typeof import('./enrolled-session');
}

// An episodic host is the one that takes no packages (schema/resource.ts, SHAPES_FOR_HOST_KIND).
function hostKindOf(shapes: readonly ResourceShape[]): HostKind {
  return shapes.includes('package') ? 'resident' : 'episodic';
}
