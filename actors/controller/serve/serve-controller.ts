import type { AnyActorRef } from 'xstate';
import { LEASE_TIMINGS, type LeaseTimings } from '../../../machines/lease.machine';
import type { SupervisionTreeNode } from '../../shared/supervisor/describe-tree';
import { runRootSupervisor, type RootSupervisor, type RootSupervisorOptions } from '../../shared/supervisor/run-root-supervisor';
import { supervise, type ChildSpec, type SupervisorSpec } from '../../shared/supervisor/supervise';
import type { SupervisorEscalated } from '../../shared/supervisor/supervisor-escalated';
import type { OperatorError } from '../../shared/operator-error';
import type { HostKind } from '../../../schema/resource';
import { CallLog } from '../calls/call-log';
import { openCallsBucket } from '../calls/calls-bucket';
import { VerbRegistry } from '../control/verb-registry';
import type { ControllerContext } from '../controller-context';
import { busObjects } from '../declarations/bus-objects';
import { DoctorBoard } from '../doctor/doctor-board';
import type { DoctorProbe } from '../doctor/doctor-probe';
import { doctorPart } from '../doctor/doctor.part';
import { servingProbes } from '../doctor/serving-probes';
import type { ControllerLog } from '../logs/log-fields';
import type { ControllerMetricsDeps } from '../metrics/controller-metrics';
import type { MetricsListen } from '../metrics/metrics-listen';
import { meshTally, type MeshTally } from '../metrics/mesh-tally';
import { nodesPartFor } from '../nodes/nodes.part';
import { KvLease, type LeaseOperations } from '../lease/kv-lease';
import { openLeaseBucket } from '../lease/lease-bucket';
import type { LeaseLost } from '../lease/lease-errors';
import type { LeaseGate } from '../lease/lease-gate';
import { leaseLogic } from '../lease/lease.actor';
import { ConditionOutbox } from '../conditions/condition-outbox';
import { openConditionBuckets, type ConditionBucketNames, type ConditionBuckets } from '../conditions/condition-buckets';
import { ConditionStore } from '../conditions/condition-store';
import { conditionsPart } from '../conditions/conditions.part';
import type { OnSilenceMade } from '../conditions/silence-made';
import { watchdogPart } from '../conditions/watchdog.part';
import { recordHandAct } from '../hand-acts/record-hand-act';
import { WATCHDOG_SETTINGS, type WatchdogSettings } from '../conditions/watchdog-settings';
import { StatusBoard } from '../status/status-board';
import { brokerCertificateStatus } from '../broker/broker-certificate-status';
import { statusPart } from '../status/status.part';
import { brokerUsersService } from './broker-users.service';
import { busService } from './bus.service';
import type { KvBucket } from './ensure-kv-bucket';
import type { ControllerPart } from './controller-parts';
import { controlService } from './control.service';
import { openController, type OpenControllerOptions } from './open-controller';
import { controllerPartGroups, KNOWN_QUERIES, KNOWN_SECRET_ANSWERS } from './parts';
import { partsService, type PartGroup } from './parts.service';
import { serviceChild } from './service-child';
import { ServiceLedger, type ControllerService } from './service-ledger';
import { SupervisionTreeBroke } from './serve-errors';
import { storeService } from './store.service';

/** The root supervisor's limits: three restarts of one child a minute, backing off 0.5 s to 10 s. */
export const CONTROLLER_SUPERVISION: Pick<SupervisorSpec, 'maxRestarts' | 'windowMs' | 'backoff'> = {
  maxRestarts: 3,
  windowMs: 60_000,
  backoff: { baseMs: 500, maxMs: 10_000 },
};

/** The actor system's clock: the process's timers. */
const SYSTEM_CLOCK = {
  setTimeout: (fn: (...args: unknown[]) => void, ms: number) => setTimeout(fn, ms),
  clearTimeout: (id: unknown) => clearTimeout(id as NodeJS.Timeout),
};

/** How long a stopping controller waits for the lease to be given back. */
const RELEASE_WAIT_MS = 5_000;

/** Options of {@link serveController}. */
export interface ServeControllerOptions extends OpenControllerOptions {
  /** The parts to run, one child each; the groups of controllerPartGroups unless given. */
  parts?: readonly ControllerPart[];
  /** Lease timings and bucket other than production's, for tests. */
  lease?: { timings?: Partial<LeaseTimings>; bucket?: string };
  /** The calls bucket, for tests that keep their calls apart. */
  callsBucket?: string;
  /** The root supervisor's limits (CONTROLLER_SUPERVISION unless given). */
  supervision?: Partial<Pick<SupervisorSpec, 'maxRestarts' | 'windowMs' | 'backoff'>>;
  /** How often status is composed when nothing asks sooner (60 s). */
  statusEveryMs?: number;
  /** How often the store is asked whether it answers (30 s). */
  storeCheckEveryMs?: number;
  /** How often the declaration stream is read back against the store and repaired (five minutes). */
  readBackEveryMs?: number;
  /** How often nodes' silence is judged, and nodes silent for three heartbeat periods of their kind shown disconnected (15 s). */
  presenceEveryMs?: number;
  /** The heartbeat period of each kind of host that silence is judged against (HEARTBEAT_PERIOD_MS); short in tests. */
  heartbeatPeriods?: Readonly<Record<HostKind, number>>;
  /**
   * The doctor's child: how often its probes run (five minutes), each probe's bound (30 s), and
   * the probes themselves (servingProbes unless given). Runs with the controller's own parts,
   * and with `parts` only when this is given.
   */
  doctor?: { everyMs?: number; boundMs?: number; firstAfterMs?: number; probes?: (ctx: ControllerContext, serving: readonly DoctorProbe[]) => DoctorProbe[] };
  /**
   * The condition store and the watchdog's child: the buckets (production's unless given), how
   * often the watchdog looks (30 s), its bounds, and where a silence is handed on once made.
   * The watchdog runs with the controller's own parts, and with `parts` only when this is given.
   */
  conditions?: { buckets?: ConditionBucketNames; watchdogEveryMs?: number; settings?: Partial<WatchdogSettings>; onSilenceMade?: OnSilenceMade };
  /** How long an acting verb may run before its caller is answered "running" (10 s). */
  answerWithinMs?: number;
  /** The actor system's clock: the process's timers unless given; model tests pass a SimulatedClock. */
  clock?: RootSupervisorOptions['clock'];
  /**
   * Children put after the controller's own, under the same root and limits: for tests that
   * drive one slot of the real tree (model-tests/supervisor-controller-tree.model.test.ts).
   */
  extraChildren?: readonly ChildSpec[];
  /**
   * The Prometheus endpoint, a `metrics` child answering GET /metrics on `listen`; none unless
   * given (`mesh-control serve --metrics-listen`). `processMetrics: false` leaves out the
   * process's own (memory, event loop).
   */
  metrics?: { listen: MetricsListen; processMetrics?: boolean };
}

/** A controller serving: its context, verbs, lease and tree, and how to stop it. */
export interface ServingController {
  ctx: ControllerContext;
  verbs: VerbRegistry;
  /** The lease's gate: whether this controller acts, under which epoch. */
  lease: LeaseGate;
  /** The last status composition, and where to ask for a new one. */
  status: StatusBoard;
  /** The doctor's last run. */
  doctor: DoctorBoard;
  /** The live supervision tree. */
  tree(): SupervisionTreeNode;
  /** The root supervisor itself: its actor (each child's slot is a child of it) and its outcome. */
  readonly root: RootSupervisor;
  /**
   * Makes a child of the tree fail with `reason` as a crash would (its work stopped, then
   * restarted by its supervisor after a backoff). False when no such child is running.
   */
  kill(child: string, reason: string): boolean;
  /**
   * Settles when the controller ended on its own, everything closed: a child failed more often
   * than the root allows (SupervisorEscalated, naming it and its last error), or the lease was
   * lost (LeaseLost). The process must then exit non-zero with it. Never settles after stop().
   */
  readonly ended: Promise<OperatorError>;
  /**
   * Stops taking control calls (those under way are answered), stops the children in reverse
   * order, gives the lease back, drains the bus connection and closes the store. Calling it
   * again waits for the first call.
   */
  stop(): Promise<void>;
}

/**
 * The composition root of `mesh-control serve`: opens the controller (openController), then
 * runs it as a supervision tree:
 *
 * ```
 * controller
 * ├─ bus           the broker connection (fails when it closed for good)
 * ├─ store         the store answering (checked every 30 s)
 * ├─ lease         the lease machine: take, renew, give back
 * ├─ metrics       GET /metrics for Prometheus, with --metrics-listen only (needs no lease)
 * ├─ broker        the broker's user list, brought in line with the store on taking the lease
 * ├─ reports       the report receiver
 * ├─ heartbeats    the heartbeat tracker, and the presence watch (silent nodes shown disconnected)
 * ├─ enrolment     token issue and sweep, the enrolment responder
 * ├─ declarations  the composer and sender: node declare, missed overlays, release, bus read-back
 * ├─ plans         modules, push and rollout plans
 * ├─ records       hand acts and durations (hand-act record, hand-acts, durations)
 * ├─ status        the status composer (status, nodes)
 * ├─ doctor        the doctor's probes every five minutes (doctor)
 * ├─ watchdog      the signals table every 30 s, raising and clearing conditions (conditions)
 * └─ control       control calls, kept as calls (tree, calls)
 * ```
 *
 * Everything below `lease` acts, so it starts once this controller holds the lease; a standby
 * runs bus, store, lease (and metrics) only, and answers nothing. A child that fails is restarted after a
 * backoff; one failing more than three times a minute makes the root give up: every child is
 * stopped, the lease given back, and `ended` settles with the child's name and last error. A
 * refused renewal settles `ended` with LeaseLost.
 *
 * Resolves once the first try for the lease has come out: as the holder with every child
 * started and calls answered, or as a standby. Rejects if the tree gave up before that.
 */
export async function serveController(dir: string, options: ServeControllerOptions = {}): Promise<ServingController> {
  const opened = await openController(dir, options);
  const { ctx, gate, identity, brokerUsers } = opened;
  const timings: LeaseTimings = { ...LEASE_TIMINGS, ...options.lease?.timings };
  let kvLease: KvLease;
  let calls: CallLog;
  let callsKv: KvBucket['kv'];
  let conditionBuckets: ConditionBuckets;
  try {
    const replicas = ctx.config.broker.replicas ?? 1;
    const leaseBucket = await openLeaseBucket(ctx.nc, { ttlMs: timings.ttlMs, replicas, ...(options.lease?.bucket === undefined ? {} : { bucket: options.lease.bucket }) });
    const callsBucket = await openCallsBucket(ctx.nc, { replicas, ...(options.callsBucket === undefined ? {} : { bucket: options.callsBucket }) });
    kvLease = new KvLease({ bucket: leaseBucket, store: ctx.store, identity, timings, ...(options.monotonicNow === undefined ? {} : { now: options.monotonicNow }), wallClock: ctx.now, log: ctx.log });
    callsKv = callsBucket.kv;
    conditionBuckets = await openConditionBuckets(ctx.nc, options.conditions?.buckets, replicas);
    calls = new CallLog({ kv: callsBucket.kv, identity, epoch: () => gate.standing().epoch, now: ctx.now, log: ctx.log });
  } catch (error) {
    await opened.close();
    throw error;
  }

  const verbs = new VerbRegistry();
  const board = new StatusBoard();
  const ledger = new ServiceLedger({ onChange: (what) => board.want(what) });
  // Set once the tree runs; the closures below are called only after that.
  const running: { root?: RootSupervisor } = {};
  const doctorBoard = new DoctorBoard(ctx.log, () => board.want('the doctor'));
  // Above the tree: what waits for the bus outlives a restart of the watchdog's child.
  const outbox = new ConditionOutbox({ nc: ctx.nc, history: conditionBuckets.history.kv, log: ctx.log });
  const conditions = new ConditionStore({
    kv: conditionBuckets.conditions.kv,
    outbox,
    fence: gate,
    log: ctx.log,
    onChange: (what) => board.want(what),
    // A silence is a hand act: kept in the condition, and in the record of hand acts beside it.
    onSilenceMade: options.conditions?.onSilenceMade ?? (async ({ condition, silence }) => {
      await recordHandAct(ctx, { verb: 'conditions.silence', subject: condition.id, why: silence.why, condition: condition.id });
    }),
  });
  const tree = (): SupervisionTreeNode => running.root?.tree() ?? { id: 'controller', state: 'starting', restarts: 0, children: [] };

  const statusGroup: PartGroup = {
    id: 'status',
    parts: [
      statusPart(board, { store: ctx.store, gate, leaseHolder: () => kvLease.current(), tree, controller: identity.controller, now: ctx.now, busRepairs: () => busObjects(ctx).repairs.counts(), doctor: () => doctorBoard.summary(), conditions: () => conditions.open(ctx.now()), brokerCertificate: () => brokerCertificateStatus(ctx.store, ctx.config.broker.cert_file, ctx.config.broker.dir), overlay: ctx.config.overlay }, options.statusEveryMs),
      ...(options.parts === undefined ? [nodesPartFor(options.heartbeatPeriods)] : []),
    ],
    queries: KNOWN_QUERIES,
  };
  const groups: PartGroup[] = [
    ...(options.parts === undefined
      ? controllerPartGroups((what) => board.want(what), options.readBackEveryMs, {
        ...(options.presenceEveryMs === undefined ? {} : { everyMs: options.presenceEveryMs }),
        ...(options.heartbeatPeriods === undefined ? {} : { periods: options.heartbeatPeriods }),
      })
      : options.parts.map((part) => ({ id: part.name, parts: [part], queries: KNOWN_QUERIES, secretAnswers: KNOWN_SECRET_ANSWERS }))),
    statusGroup,
    ...(options.parts === undefined || options.doctor !== undefined
      ? [{
        id: 'doctor',
        after: ['declarations'],
        parts: [doctorPart({
          board: doctorBoard,
          probes: (partCtx) => {
            const probes = servingProbes(partCtx, { lease: { standing: () => gate.standing(), current: () => kvLease.current(), instance: identity.instance, ttlMs: timings.ttlMs } });
            return options.doctor?.probes?.(partCtx, probes) ?? probes;
          },
          ...(options.doctor?.everyMs === undefined ? {} : { everyMs: options.doctor.everyMs }),
          ...(options.doctor?.boundMs === undefined ? {} : { boundMs: options.doctor.boundMs }),
          ...(options.doctor?.firstAfterMs === undefined ? {} : { firstAfterMs: options.doctor.firstAfterMs }),
        })],
      }]
      : []),
    ...(options.parts === undefined || options.conditions !== undefined
      ? [{
        id: 'watchdog',
        parts: [
          conditionsPart(conditions, conditionBuckets.history.kv),
          watchdogPart({
            store: conditions,
            outbox,
            calls: callsKv,
            doctor: doctorBoard,
            settings: {
              ...WATCHDOG_SETTINGS,
              ...(options.heartbeatPeriods === undefined ? {} : { periods: options.heartbeatPeriods }),
              ...(options.doctor?.everyMs === undefined ? {} : { doctorEveryMs: options.doctor.everyMs }),
              ...options.conditions?.settings,
            },
            ...(options.conditions?.watchdogEveryMs === undefined ? {} : { everyMs: options.conditions.watchdogEveryMs }),
          }),
        ],
      }]
      : []),
  ];
  const tally = meshTally(ctx);
  const services: ControllerService[] = [
    // First, so it is stopped last: the scrape that sees the controller stop is worth having.
    ...(options.metrics === undefined
      ? []
      : [metricsChild(options.metrics.listen, {
        store: ctx.store,
        lease: gate,
        tally,
        repairs: () => busObjects(ctx).repairs.counts(),
        openConditionKinds: async () => (await conditions.open(ctx.now())).map((condition) => condition.kind),
        ...(options.metrics.processMetrics === undefined ? {} : { processMetrics: options.metrics.processMetrics }),
      }, ctx.log)]),
    brokerUsersService(brokerUsers),
    ...groups.map((group) => partsService(group, ctx, verbs, ledger)),
    controlService({
      ctx,
      verbs,
      ledger,
      calls,
      tree,
      waitFor: ['broker', ...groups.map((group) => group.id)],
      ...(options.answerWithinMs === undefined ? {} : { answerWithinMs: options.answerWithinMs }),
      onActed: (verb) => board.want(`the verb ${verb}`),
      onServing: (served) => {
        ctx.log(`serving: epoch ${gate.epoch()}, store ${ctx.store.kind}, broker ${options.brokerUrl ?? ctx.config.broker.url}; tree: ${tree().children.map((child) => child.id).join(', ')}; verbs: ${served.join(', ')}`, { epoch: gate.epoch(), store: ctx.store.kind });
      },
    }),
  ];
  const childOf = (service: ControllerService): ChildSpec => ({ id: service.id, logic: serviceChild(service, { gate, ledger }), restart: 'permanent' });

  // How the controller ends on its own. Only once, whichever comes first.
  let resolveEnded: (error: OperatorError) => void = () => undefined;
  const ended = new Promise<OperatorError>((resolve) => {
    resolveEnded = resolve;
  });
  let finishing: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  const finish = (error: OperatorError, giveBack: boolean): Promise<void> =>
    (finishing ??= (async () => {
      const revision = gate.heldRevision();
      gate.end(giveBack ? 'stopped' : 'lost', error.message);
      await ledger.settled();
      if (giveBack && revision !== null) await kvLease.release(revision).catch((failure: unknown) => ctx.log(`lease: could not be given back: ${(failure as Error)?.message ?? String(failure)}`, { level: 'warn' }));
      await opened.close();
      ctx.log(`stopped: ${error.message}${error.value === undefined ? '' : `: ${error.value}`}`, { level: 'error', condition: error.name });
      resolveEnded(error);
    })());
  const serviceIds = services.map((service) => service.id);

  let escalation: SupervisorEscalated | undefined;
  const onLost = (error: LeaseLost): void => {
    void (async () => {
      if (stopping !== undefined) return;
      await ledger.stopInOrder([...serviceIds].reverse(), ctx.log);
      await running.root?.stop();
      await finish(error, false);
    })();
  };
  const root = runRootSupervisor(
    supervise({
      name: 'controller',
      ...CONTROLLER_SUPERVISION,
      ...options.supervision,
      children: [
        childOf(busService(ctx.nc, options.brokerUrl ?? ctx.config.broker.url)),
        childOf(storeService(ctx.store, options.storeCheckEveryMs)),
        { id: 'lease', logic: leaseLogic({ lease: countingRenewals(kvLease, tally), gate, onLost, log: ctx.log }), restart: 'transient', input: { timings } },
        ...services.map(childOf),
        ...(options.extraChildren ?? []),
      ],
    }),
    {
      // Given outright: an options object whose `clock` is undefined would take XState's place.
      clock: options.clock ?? SYSTEM_CLOCK,
      onEscalate: (given) => {
        escalation = given;
        ctx.log(`supervision: ${given.message}: ${given.value ?? ''}`, { level: 'error' });
      },
      exit: (_code, text) => {
        void finish(escalation ?? new SupervisionTreeBroke(text), true);
      },
    },
  );
  running.root = root;

  const serving: ServingController = {
    ctx,
    verbs,
    lease: gate,
    status: board,
    doctor: doctorBoard,
    tree,
    root,
    kill: (child, reason) => ledger.kill(child, reason),
    ended,
    stop: () =>
      (stopping ??= (async () => {
        if (finishing !== undefined) return finishing;
        await ledger.stopInOrder([...serviceIds].reverse(), ctx.log);
        await giveBackLease(running.root, RELEASE_WAIT_MS);
        await running.root?.stop();
        gate.end('stopped', null);
        await ledger.settled();
        await opened.close();
        ctx.log('stopped', { level: 'info' });
      })()),
  };

  const outcome = await Promise.race([
    gate.settled().then(async (first) => {
      if (first === 'held') await Promise.race([ledger.started('control'), ended]);
      return first;
    }),
    ended.then((error) => ({ error })),
  ]);
  if (typeof outcome === 'object') throw outcome.error;
  if (outcome === 'standing by' && !gate.isActing()) ctx.log(`standing by: ${gate.standing().note ?? 'another controller holds the lease'}; this controller acts once it is given back or expires`, { level: 'info' });
  return serving;
}

/**
 * The `metrics` child over the controller's registry. prom-client and the HTTP server are loaded
 * here, only when metrics are asked for: every mesh-control verb loads this file.
 */
function metricsChild(listen: MetricsListen, deps: ControllerMetricsDeps, log: ControllerLog): ControllerService {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { controllerMetrics } = require('../metrics/controller-metrics') as typeof import('../metrics/controller-metrics');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { metricsService } = require('../metrics/metrics.service') as typeof import('../metrics/metrics.service');
  return metricsService(listen, controllerMetrics(deps), log);
}

/** `lease` with each renewal's outcome counted for the metrics; the rest passed through as it is. */
function countingRenewals(lease: KvLease, tally: MeshTally): LeaseOperations {
  return {
    take: (signal) => lease.take(signal),
    renew: (revision) =>
      lease.renew(revision).then(
        (renewed) => {
          tally.leaseRenewal(true);
          return renewed;
        },
        (error: unknown) => {
          tally.leaseRenewal(false);
          throw error;
        },
      ),
    release: (revision) => lease.release(revision),
    watchFreed: (onFreed) => lease.watchFreed(onFreed),
    current: () => lease.current(),
  };
}

/** Asks the lease machine to give the lease back, and waits (at most `waitMs`) until it has. */
async function giveBackLease(root: RootSupervisor | undefined, waitMs: number): Promise<void> {
  const slot = root?.actor.getSnapshot().children.lease as AnyActorRef | undefined;
  const lease = slot?.getSnapshot().children?.child as AnyActorRef | undefined;
  if (lease === undefined || lease.getSnapshot().status !== 'active') return;
  const finished = new Promise<void>((resolve) => {
    const subscription = lease.subscribe({
      next: (snapshot: { status: string }) => {
        if (snapshot.status !== 'active') {
          subscription.unsubscribe();
          resolve();
        }
      },
      complete: () => resolve(),
      error: () => resolve(),
    });
  });
  lease.send({ type: 'controller.stopping' });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
  clearTimeout(timer);
}
