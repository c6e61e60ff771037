import type { NatsConnection } from '@nats-io/transport-node';
import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { createActor } from 'xstate';
import type { LastDeclaration } from '../../../schema/host-state';
import type { HostKind } from '../../../schema/resource';
import type { ReconcileReason } from '../../../machines/reconcile.machine';
import type { HostContext } from '../host-context';
import { WIREGUARD_KEY_FILE } from '../enrolment/wireguard-key';
import { readRestartDue } from '../launch-state/restart-due';
import { admitDeclaration, type AdmissionRules } from '../link/admit-declaration';
import { startDeclarationIntake, type DeclarationIntake } from '../link/declaration-intake';
import { startHeartbeats, type Heartbeats } from '../link/heartbeat-sender';
import { LinkClock } from '../link/link-clock';
import { openPinnedLink, type PinnedLink } from '../link/pinned-link';
import { recordDeclaration } from '../link/record-declaration';
import { ReportSender } from '../link/report-sender';
import { storedDeclaration } from '../reconcile/desired-resources';
import { reconcilePass, type PassReport } from '../reconcile/reconcile-pass';
import { reconcileLogic } from '../reconcile/reconcile.actor';
import type { HostLog } from './host-log';
import type { HostTimings } from './host-timings';
import { releasedState } from './released-state';
import type { RouseSource } from './rouse-signal';
import { SerialWork } from './serial-work';
import { timestampOrNull, utcTimestamp } from '../../shared/time/utc-timestamp';

/** What an enrolled host runs with. */
export interface SessionOptions {
  /** The open host (store locked), holding an identity and pins. */
  host: HostContext;
  rules: AdmissionRules;
  log: HostLog;
  /** What the heartbeats say this host is (resident unless told). */
  hostKind?: HostKind;
  /** Where rouses come from while the session runs; none, and the link is never roused. */
  rouses?: RouseSource;
  /** Seconds since the host process started, for the heartbeats (process.uptime unless given). */
  uptimeSeconds?: () => number;
  timings?: HostTimings;
}

/**
 * Why a session ended: the node was released (hosted again), the host is stopping, or it has
 * installed a new version of itself and exits so the launcher starts that one.
 */
export type SessionEnd = 'released' | 'stopped' | 'restart';

/** What a pass answered: the declaration held when it began, and whether that was the final one. */
interface Answering {
  held: LastDeclaration | null;
  final: boolean;
}

/**
 * The host while it is a node: reconciles against its store whether or not the broker can be
 * reached — the link never gates the reconcile actor, so the drift timer corrects drift while
 * disconnected — takes declarations from its queue on the broker (each through the gate, stored
 * before it is acknowledged), reports every pass and every refusal upward, and sends heartbeats
 * while linked. Each new link starts a pass (declarations may have been missed and the machine
 * may have moved), whose report says how long the host was away. A rouse goes to the link.
 * Ends when `signal` aborts, or when a final declaration has been applied and reported: the
 * identity is dropped and the machine is `hosted` again.
 */
export async function runEnrolledSession(options: SessionOptions, signal: AbortSignal): Promise<SessionEnd> {
  const { host, log } = options;
  const start = host.state.current();
  if (start.identity === null || start.pins === null) throw new Error('runEnrolledSession needs an enrolled store');
  const identity = start.identity;
  const node = identity.node;
  const timings = options.timings ?? {};
  const clock = new LinkClock(start.last_linked_at === null ? null : new Date(start.last_linked_at));
  const work = new SerialWork((error) => log.say(`could not report: ${messageOf(error)}`));
  const answering = new WeakMap<PassReport, Answering>();
  let intake: DeclarationIntake | undefined;
  let heartbeats: Heartbeats | undefined;
  let lastPassAt: Date | null = null;
  let released = false;
  // The pass in progress, for shutdown to wait on: settled with nothing, so that the last report
  // (a result per resource) is not kept alive between passes.
  let inflight: Promise<void> = Promise.resolve();
  let markReleased: () => void = () => undefined;
  const releasedNow = new Promise<void>((resolve) => {
    markReleased = resolve;
  });
  let restart = false;
  let markRestart: () => void = () => undefined;
  const restartNow = new Promise<void>((resolve) => {
    markRestart = resolve;
  });

  const release = async (): Promise<void> => {
    released = true;
    await intake?.stop();
    await host.state.update(releasedState);
    // The overlay's private key was this node's alone: nothing of a released node outlives it.
    await fs.rm(path.join(host.settings.stateDir, WIREGUARD_KEY_FILE), { force: true });
    log.say(`released: the final declaration was applied and reported; node ${node}'s identity is dropped and this machine is hosted again`);
    markReleased();
  };

  const pass = (reasons: ReconcileReason[], passSignal: AbortSignal): Promise<PassReport> => {
    const running = (async () => {
      const state = host.state.current();
      // Enrolled, with nothing declared yet: the machine is held as it is. A pass now would
      // remove what the host owns from before (a re-enrolment, a rebuilt store) before the
      // controller has said what this node should hold.
      if (released || state.identity === null || state.last_declaration === null) {
        return { reasons, startedAt: utcTimestamp(host.now()), durationMs: 0, results: [], counts: {} };
      }
      try {
        const about: Answering = { held: state.last_declaration, final: storedDeclaration(state)?.kind === 'final' };
        const report = await reconcilePass(host, reasons, passSignal);
        answering.set(report, about);
        return report;
      } catch (error) {
        log.say(`the reconcile pass failed: ${messageOf(error)}`);
        throw error;
      }
    })();
    inflight = running.then(() => undefined, () => undefined);
    return running;
  };

  const actor = createActor(reconcileLogic({
    pass,
    onPass: (report) => {
      lastPassAt = host.now();
      const about = answering.get(report) ?? { held: host.state.current().last_declaration, final: false };
      log.say(`pass (${report.reasons.join(', ')}): ${describeCounts(report)}`);
      void work.add(async () => {
        if (released) return;
        const delivered = await reports.send({ results: report.results, held: about.held }, { confirm: about.final });
        // The pass installed a new version of the host, and it ran: reported, the host stops by
        // finishing, and the launcher starts the new binary (seed 000, "The restart").
        const installed = about.final || restart ? undefined : await readRestartDue(host.settings.stateDir);
        if (installed !== undefined) {
          restart = true;
          log.say(`installed ${installed}: exiting 0 so the launcher starts the new version`);
          markRestart();
          return;
        }
        if (!about.final) return;
        // Released only once nothing the host made is left: a node that dropped its identity
        // with a removal failed could never be asked again. Until then every pass tries again.
        const left = report.results.filter((result) => result.outcome === 'failed').map((result) => result.key);
        // And only once the controller has the report that says so: a host that dropped its
        // identity on a report lost with its link would leave the controller waiting for ever.
        if (left.length === 0 && !delivered) log.say(`the final declaration is applied, but its report did not reach the broker; node ${node} stays enrolled and reports again when linked`);
        else if (left.length === 0) await release();
        else log.say(`the final declaration left resources behind (${left.join(', ')}); node ${node} stays enrolled and tries again at its next pass`);
      });
    },
    ...(timings.driftIntervalMs === undefined ? {} : { driftIntervalMs: timings.driftIntervalMs }),
  }));

  const take = async (data: Uint8Array): Promise<void> => {
    const state = host.state.current();
    const admission = admitDeclaration(parseJson(data), state, options.rules);
    if (!admission.ok) {
      log.say(`refused a declaration (${admission.reason}): ${admission.detail}`);
      // Not awaited: a release waiting in the same queue stops this intake first.
      void work.add(async () => {
        if (!released) await reports.send({ results: [], held: state.last_declaration, refused: admission });
      });
      return;
    }
    await host.state.update((s) => recordDeclaration(s, admission));
    const { declaration } = admission;
    log.say(`took declaration generation ${declaration.generation} (${declaration.kind}, epoch ${declaration.epoch}, ${declaration.resources.length} resources)`);
    actor.send({ type: 'declaration.arrived' });
  };

  // Kept in the store so a host that restarts after a week away still knows how long it was.
  // Queued with the reports, so the store is never written after the session has let it go.
  const noteLinked = (): void => {
    void work.add(async () => {
      if (!released) await host.state.update((s) => ({ ...s, last_linked_at: timestampOrNull(clock.lastLinkedAt()) }));
    });
  };

  // Asks the link for its connection only when a report is sent, after the actor has started.
  const reports = new ReportSender({ node, state: host.state, clock, connection: () => link.current(), now: host.now });

  const link: PinnedLink = openPinnedLink({
    identity,
    pins: start.pins,
    ...(timings.backoff === undefined ? {} : { backoff: timings.backoff }),
    ...(timings.link === undefined ? {} : { timings: timings.link }),
    ...(timings.deadLinkMs === undefined ? {} : { deadLinkMs: timings.deadLinkMs }),
    listener: {
      note: (line) => log.say(line),
      linked: (connection: NatsConnection, again: boolean) => {
        clock.up(host.now());
        noteLinked();
        if (!released) {
          // Every link is a new connection: the intake and the heartbeats start over on it.
          const hearing = startDeclarationIntake(connection, node, { take, note: (line) => log.say(line), now: host.now });
          intake = hearing;
          heartbeats = startHeartbeats(connection, {
            deafness: () => hearing.deafness(),
            node,
            hostKind: options.hostKind ?? 'resident',
            clock,
            lastReconcileAt: () => lastPassAt,
            uptimeSeconds: options.uptimeSeconds ?? (() => process.uptime()),
            now: host.now,
          }, timings.heartbeatMs);
        }
        // Back after being away, declarations may have been missed and the machine may have
        // moved: a pass, whose report also tells the mesh how long the host was gone. The
        // first link needs one only if a pass already finished with nowhere to report.
        if (reports.takeOwed() || again) actor.send({ type: 'link.restored' });
      },
      unlinked: () => {
        heartbeats?.stop();
        heartbeats = undefined;
        // Its connection is closing; stopping lets a declaration in hand finish first.
        const ending = intake;
        intake = undefined;
        void ending?.stop();
        clock.down(host.now());
        noteLinked();
      },
    },
  });
  const stopRousing = options.rouses?.listen(() => log.say(`rouse: ${link.rouse()}`));

  // Started once the link exists: a pass may report as soon as it ends.
  actor.start();
  actor.send({ type: 'host.started' });

  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await Promise.race([stopped, releasedNow, restartNow]);

  // Between resources, never in the middle of one; then everything queued goes out before the
  // connection is drained and closed.
  stopRousing?.();
  actor.send({ type: 'host.stopping' });
  await inflight;
  await intake?.stop();
  await work.idle();
  heartbeats?.stop();
  await link.close();
  await work.idle();
  actor.stop();
  return released ? 'released' : restart ? 'restart' : 'stopped';
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    // Not JSON: the gate refuses it as not being an envelope.
    return undefined;
  }
}

function describeCounts(report: PassReport): string {
  const counts = Object.entries(report.counts).map(([outcome, count]) => `${count} ${outcome}`);
  return counts.length === 0 ? 'nothing to do' : counts.join(', ');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
