import type { NatsConnection } from '@nats-io/transport-node';
import path from 'node:path';
import type { AnyActorRef } from 'xstate';
import * as fs from '../../shared/fs/promised-fs';
import type { HostIdentity, HostPins, HostState, LastDeclaration } from '../../../schema/host-state';
import type { HostKind } from '../../../schema/resource';
import type { LifecycleEvent } from '../../../machines/lifecycle.machine';
import type { ReconcileReason } from '../../../machines/reconcile.machine';
import { applyContextOf, type HostContext } from '../host-context';
import { WIREGUARD_KEY_FILE } from '../enrolment/wireguard-key';
import { readRestartDue } from '../launch-state/restart-due';
import { admitDeclaration, type AdmissionRules } from '../link/admit-declaration';
import { startDeclarationIntake, type DeclarationIntake } from '../link/declaration-intake';
import { startHeartbeats, type Heartbeats } from '../link/heartbeat-sender';
import type { InventoryAddress } from '../../../schema/inventory';
import { interfaceAddresses } from '../profile/interface-addresses';
import { HEARTBEAT_PERIOD_MS } from '../../shared/heartbeat/heartbeat-period';
import { LinkClock } from '../link/link-clock';
import { openPinnedLink, type PinnedLink } from '../link/pinned-link';
import { recordDeclaration } from '../link/record-declaration';
import { describeTakenBack, keptCopiesOf, takePreviouslyOwned, withTakenBack } from '../link/take-previously-owned';
import { forgetKeptAt } from '../adoption/hand-back';
import { ReportSender } from '../link/report-sender';
import { storedDeclaration } from '../reconcile/desired-resources';
import { passFailed, reconcilePass, type PassReport } from '../reconcile/reconcile-pass';
import { timestampOrNull, utcTimestamp } from '../../shared/time/utc-timestamp';
import type { HostLog } from './host-log';
import type { HostTimings } from './host-timings';
import { ReleaseLeftResources, ReleaseNotReported } from './release-errors';
import { releasedState } from './released-state';
import type { RouseSource } from './rouse-signal';
import type { DeclarationStatus, PassStatus } from './host-status';
import { SerialWork } from './serial-work';
import { messageOf } from '../../shared/message-of';
import type { FingerprintMismatch } from '../../shared/bus/bus-errors';

/** What a node's work runs with. */
export interface NodeWorkOptions {
  /** The open host (store locked), holding an identity and pins. */
  host: HostContext;
  rules: AdmissionRules;
  log: HostLog;
  /** What the heartbeats say this host is. */
  hostKind: HostKind;
  /** Where rouses come from; none, and the link is never roused. */
  rouses?: RouseSource;
  /** The machine's addresses, for the heartbeats (interfaceAddresses unless given). */
  addresses?: () => InventoryAddress[];
  /** Seconds since the host process started, for the heartbeats (process.uptime unless given). */
  uptimeSeconds?: () => number;
  timings?: HostTimings;
  /** Tells the lifecycle actor a fact about the node (link lost or back, a final declaration held). */
  tell(event: LifecycleEvent): void;
  /** A pass installed a new version of the host: the process should end so the launcher starts it. */
  restartDue(): void;
  /** Something `nox-mesh-host status` shows has changed (a link, a pass, a declaration). */
  changed?(): void;
  /**
   * The broker has refused this node's credentials long enough to take its identity as
   * revoked (see HostTimings.revokedAfterMs): said once; the caller lets the store go.
   */
  revoked?(revocation: Revocation): void;
}

/** What the running host knows of its identity's revocation, for its log and its status. */
export interface Revocation {
  node: string;
  /** The first refusal of the run that ended in it (UTC, ISO 8601). */
  refused_since: string;
  /** What happened, and what a person does next. */
  detail: string;
}

/**
 * The broker presented a certificate this node does not pin, for the log and the status: what
 * was met, what is pinned, and what a person does next.
 */
export interface CertificateUnpinned {
  since: string;
  broker_url: string;
  /** The fingerprint the broker presented; null when it could not be read. */
  presented: string | null;
  pinned: string[];
  detail: string;
}

/** How long refusals must last before the identity is taken as revoked, unless timed otherwise. */
export const DEFAULT_REVOKED_AFTER_MS = 10_000;

/** What a connection's users are told: a new link, or the end of the current one. */
interface ConnectionListener {
  linked(connection: NatsConnection): void;
  unlinked(): void;
}

/** What a pass answered: the declaration held when it began, and whether that was the final one. */
interface Answering {
  held: LastDeclaration | null;
  final: boolean;
}

/** How a pass over the final declaration came out, for the release waiting on it. */
interface FinalPass {
  left: string[];
  delivered: boolean;
}

/**
 * The state and work one node shares between its actors (node-children.ts): the store, the
 * link's clock, the report queue and the connection of the moment. The actors are small; what
 * must outlive any one of them (the report queue, what was owed to the broker, when the host was
 * last linked) lives here, for as long as the store holds this identity.
 *
 * It reconciles against the store whether or not the broker can be reached, takes declarations
 * (each through the gate, stored before it is acknowledged), reports every pass and refusal
 * upward, and sends heartbeats while linked. Each new link starts a pass, whose report says how
 * long the host was away.
 */
export class NodeWork {
  readonly identity: HostIdentity;
  readonly pins: HostPins;
  readonly clock: LinkClock;
  /** When the last pass finished; null before the first. */
  lastPassAt: Date | null = null;
  /** The last pass, as the status shows it; null before the first. */
  lastPass: PassStatus | null = null;
  /** The last declaration taken or held, as the status shows it. */
  lastDeclaration: DeclarationStatus | null = null;
  /** Since when the current link is up; null while there is none. */
  linkedSince: Date | null = null;
  private readonly reports: ReportSender;
  private readonly work: SerialWork;
  private readonly answering = new WeakMap<PassReport, Answering>();
  private readonly listeners = new Set<ConnectionListener>();
  private link: PinnedLink | undefined;
  private connection: NatsConnection | null = null;
  private intake: DeclarationIntake | undefined;
  private heartbeats: Heartbeats | undefined;
  private reconcile: AnyActorRef | undefined;
  private stopRousing: (() => void) | undefined;
  // The pass in progress, for shutdown to wait on: settled with nothing, so that the last report
  // (a result per resource) is not kept alive between passes.
  private inflight: Promise<void> = Promise.resolve();
  private releaseWaiter: ((pass: FinalPass) => void) | undefined;
  // Passes the release has asked for, so a declaration that starts one does not ask again.
  private passesAsked = 0;
  private closed = false;
  // Set while the node lets its link go on purpose: that is not the link lost.
  private stopping = false;
  private restarting = false;
  // Since when every attempt has been refused the node's credentials; null once linked.
  private refusedSince: Date | null = null;
  /** Set once the identity is taken as revoked. */
  revocation: Revocation | null = null;
  /** Set while the broker presents a certificate this node does not pin; cleared once linked. */
  unpinned: CertificateUnpinned | null = null;

  constructor(private readonly options: NodeWorkOptions) {
    const start = options.host.state.current();
    if (start.identity === null || start.pins === null) throw new Error('NodeWork needs an enrolled store');
    this.identity = start.identity;
    this.pins = start.pins;
    this.clock = new LinkClock(start.last_linked_at === null ? null : new Date(start.last_linked_at));
    this.work = new SerialWork((error) => options.log.say(`could not report: ${messageOf(error)}`));
    // Asks the link for its connection only when a report is sent.
    this.reports = new ReportSender({ node: this.identity.node, state: options.host.state, clock: this.clock, connection: () => this.connection, now: options.host.now });
    this.lastDeclaration = heldDeclaration(start);
  }

  get host(): HostContext {
    return this.options.host;
  }

  /** The node's name. */
  get node(): string {
    return this.identity.node;
  }

  /** The reconcile actor has started (again): passes are asked of it from now on. */
  attachReconcile(reconcile: AnyActorRef): void {
    this.reconcile = reconcile;
    reconcile.send({ type: 'host.started' });
    // Resumed holding a final declaration, a release was under way: it goes on.
    if (storedDeclaration(this.host.state.current())?.kind === 'final') this.options.tell({ type: 'declaration.final' });
  }

  /** The reconcile actor has stopped. */
  detachReconcile(reconcile: AnyActorRef): void {
    if (this.reconcile === reconcile) this.reconcile = undefined;
  }

  /** Hears each new connection and each end of one; returns how to stop hearing. */
  onConnection(listener: ConnectionListener): () => void {
    this.listeners.add(listener);
    if (this.connection !== null) listener.linked(this.connection);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** One pass, for the reconcile actor. */
  pass(reasons: ReconcileReason[], signal: AbortSignal): Promise<PassReport> {
    const { host, log } = this.options;
    const running = (async () => {
      const state = host.state.current();
      // Enrolled, with nothing declared yet: the machine is held as it is. A pass now would
      // remove what the host owns from before (a re-enrolment, a rebuilt store) before the
      // controller has said what this node should hold.
      if (this.closed || state.identity === null || state.last_declaration === null) {
        return { reasons, startedAt: utcTimestamp(host.now()), durationMs: 0, results: [], counts: {} };
      }
      try {
        const about: Answering = { held: state.last_declaration, final: storedDeclaration(state)?.kind === 'final' };
        const report = await reconcilePass(host, reasons, signal);
        this.answering.set(report, about);
        return report;
      } catch (error) {
        log.say(`the reconcile pass failed: ${messageOf(error)}`);
        throw error;
      }
    })();
    this.inflight = running.then(() => undefined, () => undefined);
    return running;
  }

  /** Every finished pass: said, reported in order, and for the final declaration, told to the release. */
  passed(report: PassReport): void {
    const { host, log } = this.options;
    this.lastPassAt = host.now();
    this.lastPass = { at: utcTimestamp(this.lastPassAt), reasons: [...report.reasons], outcome: passFailed(report) ? 'failed' : 'converged', counts: { ...report.counts } as Record<string, number> };
    this.options.changed?.();
    const about = this.answering.get(report) ?? { held: host.state.current().last_declaration, final: false };
    log.say(`pass (${report.reasons.join(', ')}): ${describeCounts(report)}`);
    void this.work.add(async () => {
      if (this.closed) return;
      const delivered = await this.reports.send({ results: report.results, held: about.held }, { confirm: about.final });
      // The pass installed a new version of the host, and it ran: reported, the host stops by
      // finishing, and the launcher starts the new binary (seed 000, "The restart").
      const installed = about.final || this.restarting ? undefined : await readRestartDue(host.settings.stateDir);
      if (installed !== undefined) {
        this.restarting = true;
        log.say(`installed ${installed}: exiting 0 so the launcher starts the new version`);
        this.options.restartDue();
        return;
      }
      if (!about.final) return;
      const left = report.results.filter((result) => result.outcome === 'failed').map((result) => result.key);
      if (left.length === 0 && !delivered) log.say(`the final declaration is applied, but its report did not reach the broker; node ${this.node} stays enrolled and reports again when linked`);
      else if (left.length > 0) log.say(`the final declaration left resources behind (${left.join(', ')}); node ${this.node} stays enrolled and tries again at its next pass`);
      // Only a pass over the final declaration held now can release: one asked again, newer,
      // waits for its own report (the controller completes the release on that one).
      if (about.held?.digest !== host.state.current().last_declaration?.digest) return;
      const waiting = this.releaseWaiter;
      this.releaseWaiter = undefined;
      waiting?.({ left, delivered });
    });
  }

  /**
   * The release: a pass over the final declaration, reported. Released only once nothing the
   * host made is left (a node that dropped its identity with a removal failed could never be
   * asked again) and the controller has the report that says so (one lost with its link would
   * leave the controller waiting for ever); otherwise this throws, and the lifecycle tries again.
   * Released, the identity is dropped, the link let go and the store closed.
   */
  async release(signal: AbortSignal): Promise<void> {
    // Stopped (the link was lost, the host is stopping), the release waits for no pass: the
    // lifecycle starts it again when it is time.
    const outcome = new Promise<FinalPass | undefined>((resolve) => {
      const waiter = (pass: FinalPass | undefined): void => resolve(pass);
      this.releaseWaiter = waiter;
      signal.addEventListener('abort', () => {
        if (this.releaseWaiter === waiter) this.releaseWaiter = undefined;
        resolve(undefined);
      }, { once: true });
    });
    this.passesAsked += 1;
    this.reconcile?.send({ type: 'declaration.arrived' });
    const pass = await outcome;
    if (pass === undefined) return;
    const { left, delivered } = pass;
    if (left.length > 0) throw new ReleaseLeftResources(this.node, left);
    if (!delivered) throw new ReleaseNotReported(this.node);
    const { host, log } = this.options;
    this.closed = true;
    this.stopping = true;
    await this.intake?.stop();
    await host.state.update(releasedState);
    // The overlay's private key was this node's alone: nothing of a released node outlives it.
    await fs.rm(path.join(host.settings.stateDir, WIREGUARD_KEY_FILE), { force: true });
    log.say(`released: the final declaration was applied and reported; node ${this.node}'s identity is dropped and this machine is hosted again`);
    await this.windDown();
  }

  /** Opens the link to the broker, for the link actor; returns how to let it go. */
  openLink(): () => void {
    const { log, timings = {} } = this.options;
    const link = openPinnedLink({
      identity: this.identity,
      // Read at every attempt: a signed declaration may have pinned the broker's next certificate.
      pins: () => this.options.host.state.current().pins ?? this.pins,
      ...(timings.backoff === undefined ? {} : { backoff: timings.backoff }),
      ...(timings.link === undefined ? {} : { timings: timings.link }),
      ...(timings.deadLinkMs === undefined ? {} : { deadLinkMs: timings.deadLinkMs }),
      listener: {
        note: (line) => log.say(line),
        refused: () => this.noteRefused(),
        unpinned: (mismatch) => this.noteUnpinned(mismatch),
        linked: (connection, again) => {
          this.refusedSince = null;
          this.unpinned = null;
          this.clock.up(this.host.now());
          this.noteLinked();
          this.connection = connection;
          this.linkedSince = this.host.now();
          this.options.changed?.();
          if (!this.closed) for (const listener of this.listeners) listener.linked(connection);
          this.options.tell({ type: 'link.restored' });
          // Back after being away, declarations may have been missed and the machine may have
          // moved: a pass, whose report also tells the mesh how long the host was gone. The
          // first link needs one only if a pass already finished with nowhere to report.
          if (this.reports.takeOwed() || again) this.reconcile?.send({ type: 'link.restored' });
        },
        unlinked: () => {
          this.connection = null;
          this.linkedSince = null;
          this.options.changed?.();
          for (const listener of this.listeners) listener.unlinked();
          this.clock.down(this.host.now());
          this.noteLinked();
          if (!this.stopping) this.options.tell({ type: 'link.lost' });
        },
        unreachable: () => {
          if (!this.stopping) this.options.tell({ type: 'link.lost' });
        },
      },
    });
    this.link = link;
    this.stopRousing = this.options.rouses?.listen(() => log.say(`rouse: ${link.rouse()}`));
    return () => {
      this.stopRousing?.();
      if (this.link === link) this.link = undefined;
      void link.close();
    };
  }

  /** Takes declarations from the queue on each connection, for the intake actor; returns how to stop. */
  hearDeclarations(): () => void {
    const stopHearing = this.onConnection({
      linked: (connection) => {
        this.intake = startDeclarationIntake(connection, this.node, { take: (data) => this.take(data), note: (line) => this.options.log.say(line), now: this.host.now });
      },
      unlinked: () => {
        // Its connection is closing; stopping lets a declaration in hand finish first.
        const ending = this.intake;
        this.intake = undefined;
        void ending?.stop();
      },
    });
    return () => {
      stopHearing();
      const ending = this.intake;
      this.intake = undefined;
      void ending?.stop();
    };
  }

  /** Sends heartbeats on each connection, for the heartbeat actor; returns how to stop. */
  sendHeartbeats(): () => void {
    const { timings = {} } = this.options;
    const stopHearing = this.onConnection({
      linked: (connection) => {
        this.heartbeats?.stop();
        this.heartbeats = startHeartbeats(connection, {
          deafness: () => this.intake?.deafness() ?? null,
          brokerFingerprints: () => {
            const pins = this.host.state.current().pins ?? this.pins;
            return [pins.broker_fingerprint, ...(pins.next_broker_fingerprint === undefined ? [] : [pins.next_broker_fingerprint])];
          },
          // Read at each beat, so a machine that moved is given its new endpoint at its peers.
          addresses: this.options.addresses ?? (() => interfaceAddresses()),
          node: this.node,
          hostKind: this.options.hostKind,
          clock: this.clock,
          lastReconcileAt: () => this.lastPassAt,
          uptimeSeconds: this.options.uptimeSeconds ?? (() => process.uptime()),
          now: this.host.now,
        }, timings.heartbeatMs ?? HEARTBEAT_PERIOD_MS[this.options.hostKind]);
      },
      unlinked: () => {
        this.heartbeats?.stop();
        this.heartbeats = undefined;
      },
    });
    return () => {
      stopHearing();
      this.heartbeats?.stop();
      this.heartbeats = undefined;
    };
  }

  /**
   * Stops between resources, never in the middle of one; then everything queued goes out before
   * the connection is drained and closed. The actors stopped after this find nothing left to do.
   */
  async windDown(): Promise<void> {
    this.stopping = true;
    this.stopRousing?.();
    this.reconcile?.send({ type: 'host.stopping' });
    await this.inflight;
    await this.intake?.stop();
    this.intake = undefined;
    await this.work.idle();
    this.heartbeats?.stop();
    this.heartbeats = undefined;
    await this.link?.close();
    await this.work.idle();
    this.closed = true;
  }

  /** True once the node has let go of everything: released, or wound down. */
  get ended(): boolean {
    return this.closed;
  }

  private async take(data: Uint8Array): Promise<void> {
    const { host, log, rules } = this.options;
    const state = host.state.current();
    const admission = admitDeclaration(parseJson(data), state, rules);
    if (!admission.ok) {
      log.say(`refused a declaration (${admission.reason}): ${admission.detail}`);
      // Not awaited: a release waiting in the same queue stops this intake first.
      void this.work.add(async () => {
        if (!this.closed) await this.reports.send({ results: [], held: state.last_declaration, refused: admission });
      });
      return;
    }
    const { declaration } = admission;
    // Read once, by the first full (or final) declaration after an enrolment on an empty store,
    // and never otherwise: a store that is intact is the node's own word on what it owns.
    const rebuilt = state.store_rebuilt_at !== undefined && declaration.kind !== 'overlay';
    const back = rebuilt && declaration.kind === 'full'
      ? await takePreviouslyOwned(declaration, state, { appliers: host.appliers, ctx: applyContextOf(host), rules })
      : undefined;
    await host.state.update((s) => {
      const taken = recordDeclaration(s, admission);
      return rebuilt ? withTakenBack(taken, back ?? { taken: [], reclaimed: [] }) : taken;
    });
    // After the store stopped pointing at them: a kill in between leaves a copy, never a record without one.
    for (const kept of back === undefined ? [] : keptCopiesOf(back)) forgetKeptAt(host.settings.stateDir, kept);
    log.say(`took declaration generation ${declaration.generation} (${declaration.kind}, epoch ${declaration.epoch}, ${declaration.resources.length} resources)`);
    const pinsNow = host.state.current().pins;
    if (pinsNow !== null && describePins(pinsNow) !== describePins(state.pins ?? pinsNow)) log.say(`broker certificate: this node now pins ${describePins(pinsNow)}, as the signed declaration says`);
    if (back !== undefined && declaration.previously_owned !== undefined) log.say(describeTakenBack(back));
    this.lastDeclaration = { generation: declaration.generation, kind: declaration.kind, epoch: declaration.epoch, resources: declaration.resources.length, taken_at: utcTimestamp(host.now()) };
    this.options.changed?.();
    // A final declaration starts the release, which asks for the pass itself: asked twice, the
    // reconcile machine would run a second pass straight after the first.
    const asked = this.passesAsked;
    if (declaration.kind === 'final') this.options.tell({ type: 'declaration.final' });
    if (this.passesAsked === asked) this.reconcile?.send({ type: 'declaration.arrived' });
  }

  // A broker that refuses the node's credentials at every attempt for long enough has had its
  // user removed: the identity was revoked (mesh-control node revoke, or a token issued for the
  // node). Said once, plainly, and handed up so the store can be let go for enrol.
  private noteRefused(): void {
    const now = this.host.now();
    this.refusedSince ??= now;
    const after = this.options.timings?.revokedAfterMs ?? DEFAULT_REVOKED_AFTER_MS;
    if (this.revocation !== null || this.stopping || now.getTime() - this.refusedSince.getTime() < after) return;
    this.revocation = {
      node: this.node,
      refused_since: utcTimestamp(this.refusedSince),
      detail:
        `the broker has refused node ${this.node}'s credentials since ${utcTimestamp(this.refusedSince)}: its identity was revoked at the controller ` +
        '(mesh-control node revoke, or a token issued for this node). This host has stopped acting as the node and let go of its store: ' +
        'enrol this machine again now, without stopping the host (mesh-control token issue --node NAME or --new, then nox-mesh-host enrol --token …), ' +
        'and the host takes up the new identity by itself. If the node should not have been revoked, ask the mesh\'s operator, then restart the host',
    };
    this.options.log.say(`revoked: ${this.revocation.detail}`);
    this.options.changed?.();
    this.options.revoked?.(this.revocation);
  }

  // A node away across a certificate rotation never took the signed notice of the new one, and
  // only a person can give it a new pin: by enrolling it again, which a token carries signed.
  // Said once per certificate met (the link keeps trying: the old certificate may come back,
  // or the interception end). The store is kept: a stranger's certificate must not be able to
  // make a node give up its identity.
  private noteUnpinned(mismatch: FingerprintMismatch): void {
    const presented = mismatch.found ?? null;
    if (this.unpinned !== null && this.unpinned.presented === presented) return;
    const pinned = [...mismatch.pinned];
    const met = presented === null ? 'a certificate that could not be read' : `certificate sha256 ${presented}`;
    this.unpinned = {
      since: utcTimestamp(this.host.now()),
      broker_url: mismatch.url,
      presented,
      pinned,
      detail:
        `the broker at ${mismatch.url} presents ${met}, which node ${this.node} does not pin (it pins sha256 ${pinned.join(' and sha256 ')}); nothing was sent to it. ` +
        'If the mesh\'s broker certificate was rotated while this machine was away, this node missed the signed notice of the new one and must be enrolled again: ' +
        `on the controller run mesh-control token issue --node ${this.node}, then on this machine stop the host, run nox-mesh-host enrol --token TOKEN, and start the host again. ` +
        'If the certificate was not rotated, something between this machine and the broker is intercepting the connection: do not re-enrol; tell the mesh\'s operator',
    };
    this.options.log.say(`certificate not pinned: ${this.unpinned.detail}`);
    this.options.changed?.();
  }

  // Kept in the store so a host that restarts after a week away still knows how long it was.
  // Queued with the reports, so the store is never written after the node has let it go.
  private noteLinked(): void {
    void this.work.add(async () => {
      if (!this.closed) await this.host.state.update((s) => ({ ...s, last_linked_at: timestampOrNull(this.clock.lastLinkedAt()) }));
    });
  }
}

// A declaration that does not verify is the pass's to report (it fails, saying why); the
// status just shows none.
function heldDeclaration(state: HostState): DeclarationStatus | null {
  try {
    const held = storedDeclaration(state);
    return held === null ? null : { generation: held.generation, kind: held.kind, epoch: held.epoch, resources: held.resources.length, taken_at: null };
  } catch {
    return null;
  }
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

// The broker certificates a store pins, as the log says them.
function describePins(pins: HostPins): string {
  return pins.next_broker_fingerprint === undefined
    ? `sha256 ${pins.broker_fingerprint} alone`
    : `sha256 ${pins.broker_fingerprint} and the next certificate, sha256 ${pins.next_broker_fingerprint}`;
}
