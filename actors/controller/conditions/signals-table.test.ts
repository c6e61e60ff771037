import type { Condition } from '../../../schema/condition';
import type { DoctorReport } from '../../../schema/doctor';
import { silenceBoundMs } from '../../shared/heartbeat/heartbeat-period';
import type { ConditionStore, Finding } from './condition-store';
import { DEFERRED_SIGNALS, PROBE_FAILED, SIGNALS, type SignalRow } from './signals-table';
import { watchOnce } from './watch-once';
import type { WatchdogSettings } from './watchdog-settings';
import type { BusAdvisory, HeardNode, OpenPlan, RunningCall, StaleRefusal, UnreportedSend, WatchdogView } from './watchdog-view';

// Generated from the signals table: every row is driven just inside its bound (nothing raised),
// just past it (its condition raised, naming its subject) and after the signal is gone again
// (nothing, so the watchdog clears it), and blind (its read throws: probe-failed raised, its
// condition neither raised nor cleared). A row added to the table without a scenario here fails.

const SETTINGS: WatchdogSettings = {
  periods: { resident: 30_000, episodic: 300_000 },
  reportAfterSendMs: 15 * 60_000,
  callHungMs: 10 * 60_000,
  doctorEveryMs: 5 * 60_000,
  eventLoopDeafMs: 5_000,
  planTierLateMs: 5 * 60_000,
  staleRefusalsMs: 10 * 60_000,
};
const T0 = new Date('2026-11-02T10:00:00.000Z');
const WATCHING_SINCE = new Date('2026-11-02T09:00:00.000Z');
/** How far either side of a bound a scenario looks. */
const EPSILON_MS = 1_000;

/** The view's reads a row may depend on (each row's scenario names its own). */
type Read = 'heardNodes' | 'unreportedSends' | 'runningCalls' | 'doctorLast' | 'eventLoopHeldMs' | 'openPlans' | 'staleRefusals' | 'busAdvisories';

/** A view that answers what it is given, and throws from the reads made `blind`: a hand-written fake of WatchdogView. */
class FakeView implements WatchdogView {
  blind = new Set<Read>();
  nodes: HeardNode[] = [];
  plans: OpenPlan[] = [];
  refusals: StaleRefusal[] = [];
  advisories: BusAdvisory[] = [];
  sends: UnreportedSend[] = [];
  calls: RunningCall[] = [];
  doctor: DoctorReport | undefined = { at: T0.toISOString(), source: 'serving', ok: true, probes: [] };
  heldMs = 0;
  heardNodes = async (): Promise<HeardNode[]> => this.#read('heardNodes', this.nodes);
  unreportedSends = async (): Promise<UnreportedSend[]> => this.#read('unreportedSends', this.sends);
  runningCalls = async (): Promise<RunningCall[]> => this.#read('runningCalls', this.calls);
  doctorLast = async (): Promise<DoctorReport | undefined> => this.#read('doctorLast', this.doctor);
  eventLoopHeldMs = async (): Promise<number> => this.#read('eventLoopHeldMs', this.heldMs);
  openPlans = async (): Promise<OpenPlan[]> => this.#read('openPlans', this.plans);
  staleRefusals = async (): Promise<StaleRefusal[]> => this.#read('staleRefusals', this.refusals);
  busAdvisories = async (): Promise<BusAdvisory[]> => this.#read('busAdvisories', this.advisories);
  watchingSince = (): Date => WATCHING_SINCE;

  #read<T>(read: Read, value: T): T {
    if (this.blind.has(read)) throw new Error(`${read}: no answer`);
    return value;
  }
}

/**
 * A condition store that keeps conditions in a map and nothing else: a hand-written fake of the
 * four calls watchOnce makes (the real store, over a real broker, is condition-store.test.ts).
 */
class FakeConditionStore {
  readonly kept = new Map<string, Condition>();

  all = async (): Promise<Condition[]> => [...this.kept.values()];

  raise = async (item: Finding, now: Date): Promise<string | null> => {
    const current = this.kept.get(item.id);
    if (current?.state === 'open' && current.detail === item.detail) return null;
    const at = now.toISOString();
    this.kept.set(item.id, { ...item, state: 'open', raised_at: at, changed_at: at, cleared_at: null, count: 1, epoch: 1, silence: null });
    return current?.state === 'open' ? 'condition-changed' : 'condition-raised';
  };

  clear = async (id: string, now: Date): Promise<string | null> => {
    const current = this.kept.get(id);
    if (current?.state !== 'open') return null;
    this.kept.set(id, { ...current, state: 'cleared', cleared_at: now.toISOString() });
    return 'condition-cleared';
  };

  sweep = async (): Promise<string[]> => [];

  open(): string[] {
    return [...this.kept.values()].filter((condition) => condition.state === 'open').map((condition) => condition.id).sort();
  }
}

/**
 * Each row's scenario: the signal started at T0 with bound `boundMs` (so `inside` looks at
 * T0 + bound − ε and `past` at T0 + bound + ε), the subject it should name, and how the signal
 * goes away.
 */
interface Scenario {
  boundMs: number;
  subject: string;
  /** The view's read the row cannot see without. */
  reads: Read;
  /**
   * Sets the view to the signal having started at T0, as it stands `elapsedMs` after (a signal
   * measured by what the view holds rather than by the clock, refusals still coming, uses it).
   */
  start(view: FakeView, elapsedMs: number): void;
  /** Sets the view to the signal gone. */
  end(view: FakeView): void;
  /** For a signal measured at the moment it is read (the event loop), the view inside its bound; else start's. */
  inside?(view: FakeView): void;
}

const SCENARIOS: Record<string, Scenario> = {
  'heartbeat-silent': {
    reads: 'heardNodes',
    boundMs: silenceBoundMs('resident', SETTINGS.periods),
    subject: 'kitchen',
    start: (view) => {
      // An episodic node as silent is excepted: it never appears.
      view.nodes = [{ name: 'kitchen', kind: 'resident', heardAt: T0 }, { name: 'phone', kind: 'episodic', heardAt: new Date(T0.getTime() - 3_600_000) }];
    },
    end: (view) => {
      view.nodes = [{ name: 'kitchen', kind: 'resident', heardAt: new Date(T0.getTime() + 10 * 60_000) }, ...view.nodes.filter((node) => node.name !== 'kitchen')];
    },
  },
  'report-overdue': {
    reads: 'unreportedSends',
    boundMs: SETTINGS.reportAfterSendMs,
    subject: 'shelf',
    start: (view) => {
      view.sends = [
        { node: 'shelf', kind: 'resident', lifecycleState: 'enrolled', generation: 4, sentAt: T0 },
        // Away (S1's) and episodic sends are excepted.
        { node: 'attic', kind: 'resident', lifecycleState: 'disconnected', generation: 2, sentAt: new Date(T0.getTime() - 3_600_000) },
        { node: 'phone', kind: 'episodic', lifecycleState: 'enrolled', generation: 2, sentAt: new Date(T0.getTime() - 3_600_000) },
      ];
    },
    end: (view) => {
      view.sends = view.sends.filter((send) => send.node !== 'shelf');
    },
  },
  'event-loop-deaf': {
    reads: 'eventLoopHeldMs',
    boundMs: SETTINGS.eventLoopDeafMs,
    subject: 'controller',
    // The loop's delay is what was measured when asked: inside is a delay just short of the bound.
    inside: (view) => {
      view.heldMs = SETTINGS.eventLoopDeafMs - EPSILON_MS;
    },
    start: (view) => {
      view.heldMs = SETTINGS.eventLoopDeafMs + EPSILON_MS;
    },
    end: (view) => {
      view.heldMs = 20;
    },
  },
  'call-hung': {
    reads: 'runningCalls',
    boundMs: SETTINGS.callHungMs,
    subject: 'mj2k9x1qz-3fa9c1d2',
    start: (view) => {
      view.calls = [{ id: 'mj2k9x1qz-3fa9c1d2', verb: 'push', startedAt: T0 }];
    },
    end: (view) => {
      view.calls = [];
    },
  },
  'doctor-failing': {
    reads: 'doctorLast',
    boundMs: 3 * SETTINGS.doctorEveryMs,
    subject: 'doctor',
    start: (view) => {
      view.doctor = { at: T0.toISOString(), source: 'serving', ok: true, probes: [{ probe: 'store', verdict: 'pass', detail: 'answers', next: null }] };
    },
    end: (view) => {
      view.doctor = { at: new Date(T0.getTime() + 3 * SETTINGS.doctorEveryMs).toISOString(), source: 'serving', ok: true, probes: [] };
    },
  },
  'plan-tier-late': {
    reads: 'openPlans',
    boundMs: SETTINGS.planTierLateMs,
    subject: '7',
    start: (view) => {
      view.plans = [
        { id: 7, module: 'web', version: '2', state: 'awaitingFirst', tierSince: T0, first: 'alpha', note: null },
        // Held (policy record) waits for pushes by design: never late.
        { id: 3, module: 'db', version: '9', state: 'held', tierSince: new Date(T0.getTime() - 86_400_000), first: null, note: null },
      ];
    },
    end: (view) => {
      // Its first machine applied: the rest's tier began, and the plan wrote that.
      view.plans = view.plans.map((plan) => (plan.id === 7 ? { ...plan, state: 'sending', tierSince: new Date(T0.getTime() + SETTINGS.planTierLateMs) } : plan));
    },
  },
  'bus-advisory': {
    reads: 'busAdvisories',
    // Raised at the first look that hears it: no time inside, and nothing before it was heard.
    boundMs: 0,
    subject: 'consumer-deleted.kitchen',
    start: (view) => {
      view.advisories = [{ kind: 'consumer-deleted', about: 'kitchen', at: T0, detail: 'the broker\'s advisory named its consumer node-kitchen on MESH_DECLARATIONS' }];
    },
    end: (view) => {
      // The read-back made the consumer again: the advisory no longer stands.
      view.advisories = [];
    },
  },
  'reports-refused': {
    reads: 'staleRefusals',
    boundMs: SETTINGS.staleRefusalsMs,
    subject: 'attic',
    start: (view, elapsedMs) => {
      view.refusals = [
        { node: 'attic', reason: 'older', count: 40, since: T0, lastAt: new Date(T0.getTime() + elapsedMs) },
        // One replay just after a kept report, long ago, is a redelivery: inside its bound for ever.
        { node: 'shelf', reason: 'duplicate', count: 1, since: new Date(T0.getTime() - 3_600_000), lastAt: new Date(T0.getTime() - 3_600_000 + 2_000) },
      ];
    },
    end: (view) => {
      // A report from attic was kept: its refusals are no longer stale.
      view.refusals = view.refusals.filter((refusal) => refusal.node !== 'attic');
    },
  },
};

const at = (ms: number): Date => new Date(T0.getTime() + ms);
const subjects = (found: Finding[]): string[] => found.map((item) => item.subject);

describe('the signals table', () => {
  test('has a scenario here for every row, and no scenario for a row it lacks', () => {
    expect(Object.keys(SCENARIOS).sort()).toEqual(SIGNALS.map((row) => row.kind).sort());
  });

  test('names every row once, with its seed number, and no deferred row twice', () => {
    expect(new Set(SIGNALS.map((row) => row.kind)).size).toBe(SIGNALS.length);
    for (const row of SIGNALS) expect(row.signal).toMatch(/^S\d+$/);
    for (const deferred of Object.keys(DEFERRED_SIGNALS)) expect(SIGNALS.map((row) => row.signal)).not.toContain(deferred);
  });

  describe.each(SIGNALS.map((row): [string, SignalRow] => [`${row.signal} ${row.kind}`, row]))('%s', (_name, row) => {
    const scenario = SCENARIOS[row.kind] as Scenario;

    test('raises nothing inside its bound', async () => {
      const view = new FakeView();
      if (scenario.inside === undefined) scenario.start(view, scenario.boundMs - EPSILON_MS);
      else scenario.inside(view);
      expect(subjects(await row.look(view, at(scenario.boundMs - EPSILON_MS), SETTINGS))).not.toContain(scenario.subject);
    });

    test('raises its condition past its bound, naming the subject, under its own kind and signal', async () => {
      const view = new FakeView();
      scenario.start(view, scenario.boundMs + EPSILON_MS);
      const found = await row.look(view, at(scenario.boundMs + EPSILON_MS), SETTINGS);
      expect(subjects(found)).toEqual([scenario.subject]);
      expect(found[0]).toMatchObject({ id: `${row.kind}.${scenario.subject}`, kind: row.kind, signal: row.signal });
      expect(found[0]?.detail).not.toBe('');
      expect(found[0]?.show).toMatch(/mesh-control /);
    });

    test('finds nothing once the signal is gone, so its condition is cleared', async () => {
      const view = new FakeView();
      scenario.start(view, scenario.boundMs + EPSILON_MS);
      scenario.end(view);
      expect(subjects(await row.look(view, at(scenario.boundMs + EPSILON_MS), SETTINGS))).not.toContain(scenario.subject);
    });

    test('blind, raises probe-failed and neither raises nor clears its own; seeing again clears both', async () => {
      const view = new FakeView();
      const fake = new FakeConditionStore();
      const store = fake as unknown as ConditionStore;
      const id = `${row.kind}.${scenario.subject}`;
      const blindId = `${PROBE_FAILED}.${row.kind}`;
      scenario.start(view, scenario.boundMs + EPSILON_MS);
      await watchOnce([row], view, store, SETTINGS, at(scenario.boundMs + EPSILON_MS));
      expect(fake.open()).toEqual([id]);

      // The signal is gone, but the row cannot see that: its condition is kept.
      scenario.end(view);
      view.blind.add(scenario.reads);
      const blind = await watchOnce([row], view, store, SETTINGS, at(scenario.boundMs + 2 * EPSILON_MS));
      expect(blind).toMatchObject({ raised: [blindId], cleared: [], blind: [row.kind] });
      expect(fake.open()).toEqual([id, blindId].sort());
      expect(fake.kept.get(blindId)).toMatchObject({ kind: PROBE_FAILED, signal: row.signal, severity: 'urgent', detail: expect.stringContaining(`${scenario.reads}: no answer`) });

      view.blind.clear();
      const seeing = await watchOnce([row], view, store, SETTINGS, at(scenario.boundMs + 3 * EPSILON_MS));
      expect(seeing.cleared.sort()).toEqual([id, blindId].sort());
      expect(fake.open()).toEqual([]);
    });
  });

  test('the doctor row raises each probe that fails or cannot run, urgent when it fails, and not one that warns', async () => {
    const view = new FakeView();
    view.doctor = {
      at: T0.toISOString(),
      source: 'serving',
      ok: false,
      probes: [
        { probe: 'lease', verdict: 'fail', detail: 'not renewed', next: 'mesh-control status' },
        { probe: 'store', verdict: 'cannot-run', detail: 'timed out', next: 'check PostgreSQL' },
        { probe: 'certificate', verdict: 'warn', detail: 'ends in 20 days', next: 'renew it' },
      ],
    };
    const found = await SIGNALS.find((row) => row.kind === 'doctor-failing')?.look(view, T0, SETTINGS);
    expect(found?.map((item) => [item.subject, item.severity])).toEqual([['lease', 'urgent'], ['store', 'warning']]);
  });

  test('a heartbeat silence is counted from when the controller began watching, not before', async () => {
    const view = new FakeView();
    view.nodes = [{ name: 'kitchen', kind: 'resident', heardAt: new Date(WATCHING_SINCE.getTime() - 3_600_000) }];
    const row = SIGNALS.find((item) => item.kind === 'heartbeat-silent') as SignalRow;
    const bound = silenceBoundMs('resident', SETTINGS.periods);
    expect(await row.look(view, new Date(WATCHING_SINCE.getTime() + bound - EPSILON_MS), SETTINGS)).toEqual([]);
    expect(subjects(await row.look(view, new Date(WATCHING_SINCE.getTime() + bound + EPSILON_MS), SETTINGS))).toEqual(['kitchen']);
  });
});
