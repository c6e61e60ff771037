import type { HostParts, HostSettings } from '../host-context';
import { clearRestartDue } from '../launch-state/restart-due';
import type { HostKind } from '../../../schema/resource';
import type { AdmissionRules } from '../link/admit-declaration';
import type { HostLog } from './host-log';
import type { HostTree } from './host-tree';
import { timingsFromEnvironment, type HostTimings } from './host-timings';
import { hostedStatus, showWhileHosted, stoppedWhileHosted } from './hosted-status';
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
  /** Hears the host's supervision tree each time it starts. */
  onTree?: (tree: HostTree) => void;
}

const DEFAULT_POLL_MS = 3000;

/**
 * The host process, `nox-mesh-host run`: claims the pidfile (where a rouse finds it). Hosted —
 * no identity — it holds nothing, not even the store lock, so `nox-mesh-host enrol` can run
 * beside it, and it looks for an identity whenever the state directory changes; until the
 * machine may be a node it loads nothing of one. Then it runs as a supervision tree whose child
 * is the lifecycle actor (host-tree.ts), which holds the store and runs the node while there is
 * an identity, and is hosted again once released.
 *
 * It only ever dials out: there is no listening socket. A rouse is SIGUSR1 to the pid in the
 * pidfile, and goes to the link while enrolled.
 */
export async function runHost(options: RunHostOptions): Promise<void> {
  const { settings, log, signal } = options;
  const timings = options.timings ?? timingsFromEnvironment(process.env);
  const rouses = options.rouses ?? signalRouses();
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const startedAt = new Date();
  const pidfile = await claimPidfile(settings.stateDir);
  // Left by a host that installed this version and died before it could exit: done already.
  await clearRestartDue(settings.stateDir);
  let setup: Promise<NodeSetup> | undefined;
  const node = (): Promise<NodeSetup> => (setup ??= typeof options.node === 'function' ? options.node() : Promise.resolve(options.node));
  try {
    // Not a node, plainly: wait without loading the store's code, the node's or the actors'.
    while (!signal.aborted && (await plainlyHosted(settings.stateDir))) {
      log.say(`hosted: this machine has no identity yet; waiting for nox-mesh-host enrol --token … (state in ${settings.stateDir})`);
      await showWhileHosted(settings.stateDir, hostedStatus(startedAt)).catch((error: unknown) => log.say(`could not write the status file: ${(error as Error)?.message ?? String(error)}`));
      const stopListening = rouses.listen(() => log.say('rouse: not a node yet, so there is no link to rouse'));
      try {
        await waitForIdentity(settings.stateDir, signal, pollMs);
      } finally {
        stopListening();
      }
    }
    // A new version of the host is installed when the tree ends with 'restart': exit 0, and
    // the launcher starts it.
    if (signal.aborted) await showWhileHosted(settings.stateDir, stoppedWhileHosted(startedAt)).catch((error: unknown) => log.say(`could not write the status file: ${(error as Error)?.message ?? String(error)}`));
    // A revoked identity replaced by enrolling again: a new tree takes the new one up.
    while (!signal.aborted) {
      const end = await treeCode().runHostTree({ settings, node, log, rouses, timings, pollMs, signal, startedAt, ...(options.onTree === undefined ? {} : { onStarted: options.onTree }) });
      if (end !== 'identity-replaced') break;
    }
    log.say('stopped');
  } finally {
    await pidfile.release();
  }
}

/**
 * The code of a node and of the host's actors, loaded the first time this machine may be one:
 * the store, the NATS client, the link, XState and the machines. A machine waiting to be
 * enrolled needs none of it, and in the bundle what is never required is never evaluated.
 * Signatures are checked with Node's own Ed25519 (actors/shared/crypto/ed25519.ts), so no host
 * process loads libsodium; see hosted-footprint.test.ts.
 */
function treeCode(): typeof import('./host-tree') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./host-tree') as typeof import('./host-tree');
}
