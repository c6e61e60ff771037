import { setTimeout as sleep } from 'node:timers/promises';
import { fromPromise, type AnyActorLogic, type AnyActorRef, type AnyStateMachine, type fromCallback } from 'xstate';
import { DEFAULT_RELEASE_RETRY_DELAY_MS, lifecycleMachine, type LifecycleEvent, type LifecycleIdentity } from '../../../machines/lifecycle.machine';
import type { HostKind, ResourceShape } from '../../../schema/resource';
import { asSupervisedChild } from '../../shared/supervisor/supervised-child';
import { openHost, type HostContext, type HostSettings } from '../host-context';
import { StoreInconsistent } from '../reconcile/store-inconsistent';
import { StoreLocked } from '../store/store-errors';
import type { HostLog } from './host-log';
import type { HostTimings } from './host-timings';
import { nodeLogic } from './node-children';
import { NodeWork, type Revocation } from './node-work';
import type { NodeSetup } from './run-host';
import type { RouseSource } from './rouse-signal';
import { plainlyHosted, waitForIdentity } from './wait-for-identity';

/** What the host's lifecycle actor works with. */
export interface HostLifecycleOptions {
  settings: HostSettings;
  /** The node's setup: its appliers and adopter, the rules its gate admits by, what it is. */
  node: () => Promise<NodeSetup>;
  log: HostLog;
  rouses: RouseSource;
  timings: HostTimings;
  /** How often a hosted machine looks for an identity when no change is noticed. */
  pollMs: number;
  /** The store cannot be used as it is (a restart would not mend it): the host stops and says why. */
  fail(error: unknown): void;
  /** A pass installed a new version of the host: the host exits so the launcher starts it. */
  restartDue(): void;
  /** Something the status shows has changed. */
  changed?(): void;
  /**
   * The identity was revoked, the store let go, and `enrol` has since put another identity in
   * it: the host starts its tree again to take that one up.
   */
  identityReplaced?(): void;
  /** Aborted when the host stops: ends a wait for a new identity. */
  signal?: AbortSignal;
}

/**
 * The host's side of the node lifecycle (machines/lifecycle.machine.ts): the machine given its
 * work, and what that work shares — the open store and the node's work — across its states and
 * its restarts. `logic()` is the actor the root supervisor runs; it begins as the host process
 * does, with `operator.install`.
 *
 * - `identity` (in `hosted`): waits, holding nothing, until the store holds an identity, then
 *   opens the store and keeps it; a store locked by `nox-mesh-host enrol` is waited for.
 * - `node` (spawned on becoming the node): the link, intake, heartbeats and reconcile
 *   (node-children.ts).
 * - `release` (in `releasing`): a pass over the final declaration, reported; then the identity
 *   is dropped and the link let go (NodeWork.release).
 */
export class HostLifecycle {
  private host: HostContext | undefined;
  private work: NodeWork | undefined;
  private lifecycle: AnyActorRef | undefined;

  constructor(private readonly options: HostLifecycleOptions) {}

  /** The lifecycle actor now running, if any. */
  actor(): AnyActorRef | undefined {
    return this.lifecycle;
  }

  /** The lifecycle machine with the host's work behind it. */
  logic(): AnyStateMachine {
    const { timings } = this.options;
    const logic = lifecycleMachine.provide({
      actors: {
        identity: fromPromise<LifecycleIdentity>(({ signal }) => this.awaitIdentity(signal)),
        // A supervisor where the machine names only a callback: the machine never looks inside it.
        // Its escalation report is turned into a failure, so a node supervisor that gave up fails
        // the lifecycle, which its own supervisor restarts, rather than ending quietly.
        node: asSupervisedChild(nodeLogic(() => this.currentWork(), timings.driftIntervalMs)) as unknown as ReturnType<typeof fromCallback>,
        release: fromPromise<void, { node: string }>(({ signal }) => this.currentWork().release(signal)),
      },
      // A failed release is tried again at the host's next pass, which the drift timer brings.
      delays: { releaseRetryDelay: timings.driftIntervalMs ?? DEFAULT_RELEASE_RETRY_DELAY_MS },
    });
    // The host process starting is the machine's `operator.install`; each incarnation the
    // supervisor starts begins the same way, and finds the store where the last one left it.
    const started = Object.create(logic) as AnyStateMachine;
    (started as AnyActorLogic).start = (snapshot, scope) => {
      (logic as AnyActorLogic).start?.(snapshot, scope);
      this.lifecycle = scope.self;
      scope.self.send({ type: 'operator.install' });
    };
    return started;
  }

  /** The node's work, once there is a node. */
  currentWork(): NodeWork {
    if (this.work === undefined) throw new Error('the node has no work: the store holds no identity');
    return this.work;
  }

  /** The node's work, if this host is a node now. */
  nodeWork(): NodeWork | undefined {
    return this.work;
  }

  /** The revocation of the node's identity, once the host has taken it as revoked. */
  revocation(): Revocation | null {
    return this.work?.revocation ?? null;
  }

  /**
   * The identity was revoked: the node's work winds down (it stays, inert, for the status to
   * show) and the store is let go, so `nox-mesh-host enrol` can run beside this process. Once
   * the store holds another identity, the tree is started again to take it up.
   */
  private async letGoRevoked(revocation: Revocation): Promise<void> {
    const { settings, log, pollMs, signal } = this.options;
    const work = this.work;
    if (work !== undefined && !work.ended) await work.windDown();
    const host = this.host;
    this.host = undefined;
    await host?.close();
    this.options.changed?.();
    const never = new AbortController();
    if (!(await waitForIdentity(settings.stateDir, signal ?? never.signal, pollMs, work?.identity.nkey_public))) return;
    log.say(`the store holds a new identity (enrolled again after node ${revocation.node} was revoked): taking it up`);
    this.options.identityReplaced?.();
  }

  /** Lets the node's work go (between resources, what is queued sent) and closes the store. */
  async close(): Promise<void> {
    const work = this.work;
    this.work = undefined;
    if (work !== undefined && !work.ended) await work.windDown();
    const host = this.host;
    this.host = undefined;
    await host?.close();
    this.options.changed?.();
  }

  private tell(event: LifecycleEvent): void {
    this.lifecycle?.send(event);
  }

  private async awaitIdentity(signal: AbortSignal): Promise<LifecycleIdentity> {
    const { settings, log } = this.options;
    // A node released (or one whose work ended): its store is let go, so enrol can run beside.
    if (this.work?.ended === true || this.host?.state.current().identity === null) await this.close();
    let toldLocked = false;
    while (!signal.aborted) {
      if (this.host === undefined) {
        // Not a node, plainly: wait without holding the store.
        if (await plainlyHosted(settings.stateDir)) {
          await this.waitHosted(signal);
          continue;
        }
        try {
          this.host = await openHost(settings, (await this.options.node()).parts);
        } catch (error) {
          // `enrol` holds the store while it works; it lets go in moments.
          if (!(error instanceof StoreLocked)) return this.failWith(error);
          if (!toldLocked) log.say(`waiting for the store: ${error.message}`);
          toldLocked = true;
          await sleep(500, undefined, { signal }).catch(() => undefined);
          continue;
        }
        toldLocked = false;
        if (this.host.storeProblem !== undefined) log.say(`warning: ${this.host.storeProblem}`);
      }
      const { identity, pins } = this.host.state.current();
      if (identity === null) {
        await this.close();
        await this.waitHosted(signal);
        continue;
      }
      if (pins === null) {
        return this.failWith(new StoreInconsistent(`the host store holds the identity of node ${identity.node} but no broker or controller key`, {
          next: 're-enrol this machine (nox-mesh-host enrol --token …) so they are pinned again',
        }));
      }
      if (this.work === undefined) {
        log.say(`enrolled as node ${identity.node}; reaching the broker at ${pins.broker_url}`);
        const { rules, hostKind } = await this.options.node();
        this.work = new NodeWork({
          host: this.host,
          rules,
          log,
          hostKind: hostKind ?? hostKindOf(rules.shapes),
          rouses: this.options.rouses,
          timings: this.options.timings,
          tell: (event) => this.tell(event),
          restartDue: () => this.options.restartDue(),
          revoked: (revocation) => {
            setImmediate(() => {
              this.letGoRevoked(revocation).catch((error: unknown) => this.options.fail(error));
            });
          },
          ...(this.options.changed === undefined ? {} : { changed: this.options.changed }),
        });
      }
      return { node: identity.node };
    }
    return new Promise<never>(() => undefined);
  }

  private async waitHosted(signal: AbortSignal): Promise<void> {
    const { settings, log, rouses, pollMs } = this.options;
    log.say(`hosted: this machine has no identity yet; waiting for nox-mesh-host enrol --token … (state in ${settings.stateDir})`);
    const stopListening = rouses.listen(() => log.say('rouse: not a node yet, so there is no link to rouse'));
    try {
      await waitForIdentity(settings.stateDir, signal, pollMs);
    } finally {
      stopListening();
    }
  }

  // Not a failure a restart mends: the host stops, and says what is wrong with its store.
  private failWith(error: unknown): Promise<never> {
    this.options.fail(error);
    return new Promise<never>(() => undefined);
  }
}

// An episodic host is the one that takes no packages (schema/resource.ts, SHAPES_FOR_HOST_KIND).
function hostKindOf(shapes: readonly ResourceShape[]): HostKind {
  return shapes.includes('package') ? 'resident' : 'episodic';
}
