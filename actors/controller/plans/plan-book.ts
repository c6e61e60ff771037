import { EMPTY_PLAN_CONTEXT, FIRST_REPORT_WAIT_MS, type PlanContext, type PlanEvent, type PlanSend } from '../../../machines/plan.machine';
import type { UpgradePolicy } from '../../../schema/module';
import type { ControllerContext } from '../controller-context';
import type { ModuleAssignment } from '../modules/modules.repo';
import { getRevision } from '../modules/modules.repo';
import type { Sql } from '../store/sql-store';
import { judgeFirstReport } from './judge-first-report';
import { PlanEnded, PlanNotFound, PlanNotStopped } from './plan-errors';
import { PlanRunner, type PlanClock } from './plan-runner';
import { getPlan, insertPlan, openPlans, type PlanRow } from './plans.repo';
import type { PlanRevision } from './send-plan-revision';

/** How the plans are worked; the defaults are what a serving controller uses. */
export interface PlanBookOptions {
  /** How long the first machine has to report on the send before the plan stops (10 min). */
  firstReportWaitMs?: number;
  /** How often the first machines' reports are looked at, in ms (1 s); 0 for only when checkNow() is called. */
  checkEveryMs?: number;
  /** How recently a node must have been heard from to be a first machine (10 min). */
  heardWithinMs?: number;
  /** The clock the plans' waits run on (tests simulate it). */
  clock?: PlanClock;
  /** Asked before each node is sent, with the send's signal: a hook for tests to hold a send. */
  beforeSend?: (plan: number, node: string, signal: AbortSignal) => Promise<void>;
}

/** Ten minutes: heard from within this long, a node may be a plan's first machine. */
export const HEARD_WITHIN_MS = 10 * 60 * 1000;

/**
 * The plans of a serving controller: one runner (PlanRunner) per open plan, taken up from the
 * store at start — so a controller taking over carries on every open plan — and for each plan
 * opened since. It judges each first machine's report after the send (judgeFirstReport) every
 * `checkEveryMs`, and it is where a verb closes or retries a plan and where a push tells the
 * plans which nodes it sent. A runner that stopped (its write refused) is taken up again from the
 * store on the next check, while this controller acts.
 */
export class PlanBook {
  readonly #ctx: ControllerContext;
  readonly #options: Required<Omit<PlanBookOptions, 'clock' | 'beforeSend'>> & Pick<PlanBookOptions, 'clock' | 'beforeSend'>;
  readonly #runners = new Map<number, PlanRunner>();
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  #stopped = false;

  constructor(ctx: ControllerContext, options: PlanBookOptions = {}) {
    this.#ctx = ctx;
    this.#options = {
      firstReportWaitMs: options.firstReportWaitMs ?? FIRST_REPORT_WAIT_MS,
      checkEveryMs: options.checkEveryMs ?? 1000,
      heardWithinMs: options.heardWithinMs ?? HEARD_WITHIN_MS,
      clock: options.clock,
      beforeSend: options.beforeSend,
    };
  }

  /** The wait a first machine is given, in ms. */
  get firstReportWaitMs(): number {
    return this.#options.firstReportWaitMs;
  }

  /** Takes up every open plan in the store, then looks at reports every `checkEveryMs`. */
  async start(): Promise<void> {
    for (const row of await openPlans(this.#ctx.store)) await this.take(row);
    if (this.#options.checkEveryMs > 0) this.#schedule();
  }

  /**
   * Records a new plan for `revision` over `targets` (inside the caller's transaction, beside the
   * revision itself), with its first machine chosen when the policy is `one-first`. Take it up
   * with take() once the transaction has committed.
   */
  async record(tx: Sql, revision: PlanRevision & { policy: UpgradePolicy }, targets: readonly string[]): Promise<PlanRow> {
    this.#ctx.lease?.assertActing(`open a plan for ${revision.module} ${revision.version}`);
    const sorted = [...targets].sort();
    const first = revision.policy === 'one-first' ? await this.chooseFirst(tx, sorted) : null;
    const context: PlanContext = { ...EMPTY_PLAN_CONTEXT, policy: revision.policy, targets: sorted, first };
    return insertPlan(tx, { module: revision.module, version: revision.version, context, epoch: this.#ctx.epoch(), at: this.#ctx.now() });
  }

  /**
   * The first machine among `targets`: the first by name heard from within `heardWithinMs` that
   * can take its full declaration now; failing that, the first by name that can; failing that,
   * the first by name (whose send will then stop the plan, naming why).
   */
  async chooseFirst(sql: Sql, targets: readonly string[]): Promise<string | null> {
    if (targets.length === 0) return null;
    const rows = await sql.query<{ name: string; heard: Date | null; ready: boolean }>(
      `SELECT name, GREATEST(last_seen_at, reported_at) AS heard,
         (lifecycle_state IN ('enrolled', 'disconnected') AND release_generation IS NULL AND overlay_applied_generation IS NOT NULL) AS ready
       FROM nodes WHERE name = ANY($1::text[]) ORDER BY name`,
      [`{${targets.join(',')}}`],
    );
    const since = this.#ctx.now().getTime() - this.#options.heardWithinMs;
    const lately = rows.find((row) => row.ready && row.heard !== null && row.heard.getTime() >= since);
    return lately?.name ?? rows.find((row) => row.ready)?.name ?? [...targets].sort()[0] ?? null;
  }

  /**
   * Starts working a plan read from the store. A plan being opened first supersedes the older
   * open plans of its module (it holds every node they had not sent). Taking up a plan already
   * at work returns its runner.
   */
  async take(row: PlanRow): Promise<PlanRunner> {
    const revision = await getRevision(this.#ctx.store, row.module, row.version);
    if (revision === undefined) throw new Error(`plan ${row.id} rolls out ${row.module} ${row.version}, which is not registered`);
    const existing = this.#runners.get(row.id);
    if (existing !== undefined) return existing;
    const runner = new PlanRunner({
      ctx: this.#ctx,
      row,
      revision: { module: row.module, version: row.version, seq: revision.seq },
      firstReportWaitMs: this.#options.firstReportWaitMs,
      ...(this.#options.clock === undefined ? {} : { clock: this.#options.clock }),
      ...(this.#options.beforeSend === undefined ? {} : { beforeSend: this.#options.beforeSend }),
      onEnded: (ended) => {
        if (this.#runners.get(ended.id) === ended) this.#runners.delete(ended.id);
        this.#ctx.log(`plans: plan ${ended.id} (${ended.revision.module} ${ended.revision.version}) ${ended.state()}${ended.context().note === null ? '' : `: ${ended.context().note}`}`, { plan: ended.id, state: ended.state() });
      },
      onBroken: (broken, error) => {
        if (this.#runners.get(broken.id) === broken) this.#runners.delete(broken.id);
        this.#ctx.log(`plans: plan ${broken.id} is no longer worked here: ${(error as Error)?.message ?? String(error)}`, { level: 'error', plan: broken.id });
      },
    });
    this.#runners.set(row.id, runner);
    if (row.state === 'opening') await this.#supersedeOlder(row);
    runner.start();
    // A plan a newer one was opened beside (while this one was not worked) must not go on.
    const newer = await newerPlanOf(this.#ctx.store, row);
    if (newer !== null && row.state !== 'opening') {
      await runner.send({ type: 'plan.superseded', by: newer }).catch((error: unknown) => this.#ctx.log(`plans: plan ${row.id} could not be superseded by plan ${newer}: ${String(error)}`, { level: 'error', plan: row.id, by: newer }));
    }
    return runner;
  }

  /** The runner working plan `id` here, if any. */
  runner(id: number): PlanRunner | undefined {
    return this.#runners.get(id);
  }

  /** The runners at work, by plan id. */
  runners(): PlanRunner[] {
    return [...this.#runners.values()].sort((a, b) => a.id - b.id);
  }

  /** Closes an open plan by hand (`plans close ID`): nothing more is sent under it. */
  async close(id: number): Promise<PlanRow> {
    const runner = await this.#open(id, 'closed');
    return runner.send({ type: 'operator.close' });
  }

  /**
   * Retries a stopped plan (`plans retry ID`): the first machine is sent again while it has not
   * applied the revision, the nodes not yet sent otherwise.
   */
  async retry(id: number): Promise<PlanRow> {
    const runner = await this.#open(id, 'retried');
    if (runner.state() !== 'stopped') throw new PlanNotStopped(id, runner.state());
    return runner.send({ type: 'operator.retry' });
  }

  /**
   * A push sent `node` a declaration carrying `assignments` (each module at its version): every
   * open plan rolling out one of those revisions, or an older one, to that node counts it sent.
   */
  async pushed(node: string, assignments: readonly ModuleAssignment[], send: PlanSend): Promise<void> {
    const events: Array<Promise<unknown>> = [];
    for (const runner of this.runners()) {
      const carried = assignments.find((assignment) => assignment.module === runner.revision.module);
      if (carried === undefined || carried.seq < runner.revision.seq) continue;
      const context = runner.context();
      if (!context.targets.includes(node) || context.sent[node] !== undefined) continue;
      events.push(runner.send({ type: 'nodes.pushed', sent: { [node]: send } }).catch((error: unknown) => this.#ctx.log(`plans: plan ${runner.id} did not take the push to ${node}: ${String(error)}`, { level: 'warn', plan: runner.id, node })));
    }
    await Promise.all(events);
  }

  /**
   * Looks once at the reports of every first machine awaited, and hands each plan its verdict;
   * then takes up again any open plan no runner works (while this controller acts).
   */
  checkNow(): Promise<void> {
    return (this.#checking ??= this.#check().finally(() => {
      this.#checking = undefined;
    }));
  }

  /** Stops looking at reports and stops every runner (each plan stays as the store holds it). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#checking?.catch(() => undefined);
    const runners = [...this.#runners.values()];
    this.#runners.clear();
    await Promise.all(runners.map((runner) => runner.stop()));
  }

  async #check(): Promise<void> {
    for (const runner of this.runners()) {
      if (runner.state() !== 'awaitingFirst') continue;
      const { first, sent } = runner.context();
      const send = first === null ? undefined : sent[first];
      if (first === null || send === undefined) continue;
      const verdict = await judgeFirstReport(this.#ctx.store, first, send);
      if (verdict === undefined || runner.state() !== 'awaitingFirst') continue;
      const event: PlanEvent = verdict.kind === 'applied' ? { type: 'first.applied' } : { type: 'first.failed', reason: verdict.reason };
      await runner.send(event).catch((error: unknown) => this.#ctx.log(`plans: plan ${runner.id} did not take its first machine's report: ${String(error)}`, { level: 'warn', plan: runner.id }));
    }
    if (this.#stopped || (this.#ctx.lease !== undefined && !this.#ctx.lease.isActing())) return;
    for (const row of await openPlans(this.#ctx.store)) {
      if (this.#stopped) return;
      if (!this.#runners.has(row.id)) await this.take(row);
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.checkNow()
        .catch((error: unknown) => this.#ctx.log(`plans: looking at reports failed: ${(error as Error)?.message ?? String(error)}`, { level: 'error' }))
        .finally(() => this.#schedule());
    }, this.#options.checkEveryMs);
    this.#timer.unref();
  }

  async #open(id: number, asked: string): Promise<PlanRunner> {
    const working = this.#runners.get(id);
    if (working !== undefined) return working;
    const row = await getPlan(this.#ctx.store, id);
    if (row === undefined) throw new PlanNotFound(id);
    if (row.ended_at !== null) throw new PlanEnded(id, row.state, asked, row.superseded_by);
    return this.take(row);
  }

  async #supersedeOlder(row: PlanRow): Promise<void> {
    // Older plans are taken up before newer ones (start reads them by id), so each is here.
    for (const older of this.runners()) {
      if (older.id >= row.id || older.revision.module !== row.module) continue;
      await older.send({ type: 'plan.superseded', by: row.id }).catch((error: unknown) => this.#ctx.log(`plans: plan ${older.id} could not be superseded by plan ${row.id}: ${String(error)}`, { level: 'error', plan: older.id, by: row.id }));
    }
  }
}

/** The newest plan opened for the same module after `row`, or null. */
async function newerPlanOf(sql: Sql, row: PlanRow): Promise<number | null> {
  const [found] = await sql.query<{ id: number }>('SELECT id FROM plans WHERE module = $1 AND id > $2 ORDER BY id DESC LIMIT 1', [row.module, row.id]);
  return found?.id ?? null;
}
