import type { DoctorReport } from '../../../schema/doctor';
import { silenceBoundMs } from '../../shared/heartbeat/heartbeat-period';
import type { Finding } from './condition-store';
import { DEFERRED_SIGNALS, SIGNALS, type SignalRow } from './signals-table';
import type { WatchdogSettings } from './watchdog-settings';
import type { HeardNode, RunningCall, UnreportedSend, WatchdogView } from './watchdog-view';

// Generated from the signals table: every row is driven just inside its bound (nothing raised),
// just past it (its condition raised, naming its subject) and after the signal is gone again
// (nothing, so the watchdog clears it). A row added to the table without a scenario here fails.

const SETTINGS: WatchdogSettings = {
  periods: { resident: 30_000, episodic: 300_000 },
  reportAfterSendMs: 15 * 60_000,
  callHungMs: 10 * 60_000,
  doctorEveryMs: 5 * 60_000,
  eventLoopDeafMs: 5_000,
};
const T0 = new Date('2026-11-02T10:00:00.000Z');
const WATCHING_SINCE = new Date('2026-11-02T09:00:00.000Z');
/** How far either side of a bound a scenario looks. */
const EPSILON_MS = 1_000;

/** A view that answers what it is given: a hand-written fake of WatchdogView. */
class FakeView implements WatchdogView {
  nodes: HeardNode[] = [];
  sends: UnreportedSend[] = [];
  calls: RunningCall[] = [];
  doctor: DoctorReport | undefined = { at: T0.toISOString(), source: 'serving', ok: true, probes: [] };
  heldMs = 0;
  heardNodes = async (): Promise<HeardNode[]> => this.nodes;
  unreportedSends = async (): Promise<UnreportedSend[]> => this.sends;
  runningCalls = async (): Promise<RunningCall[]> => this.calls;
  doctorLast = async (): Promise<DoctorReport | undefined> => this.doctor;
  eventLoopHeldMs = async (): Promise<number> => this.heldMs;
  watchingSince = (): Date => WATCHING_SINCE;
}

/**
 * Each row's scenario: the signal started at T0 with bound `boundMs` (so `inside` looks at
 * T0 + bound − ε and `past` at T0 + bound + ε), the subject it should name, and how the signal
 * goes away.
 */
interface Scenario {
  boundMs: number;
  subject: string;
  /** Sets the view to the signal having started at T0. */
  start(view: FakeView): void;
  /** Sets the view to the signal gone. */
  end(view: FakeView): void;
  /** For a signal measured at the moment it is read (the event loop), the view inside its bound; else start's. */
  inside?(view: FakeView): void;
}

const SCENARIOS: Record<string, Scenario> = {
  'heartbeat-silent': {
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
    boundMs: 3 * SETTINGS.doctorEveryMs,
    subject: 'doctor',
    start: (view) => {
      view.doctor = { at: T0.toISOString(), source: 'serving', ok: true, probes: [{ probe: 'store', verdict: 'pass', detail: 'answers', next: null }] };
    },
    end: (view) => {
      view.doctor = { at: new Date(T0.getTime() + 3 * SETTINGS.doctorEveryMs).toISOString(), source: 'serving', ok: true, probes: [] };
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
      (scenario.inside ?? scenario.start)(view);
      expect(subjects(await row.look(view, at(scenario.boundMs - EPSILON_MS), SETTINGS))).not.toContain(scenario.subject);
    });

    test('raises its condition past its bound, naming the subject, under its own kind and signal', async () => {
      const view = new FakeView();
      scenario.start(view);
      const found = await row.look(view, at(scenario.boundMs + EPSILON_MS), SETTINGS);
      expect(subjects(found)).toEqual([scenario.subject]);
      expect(found[0]).toMatchObject({ id: `${row.kind}.${scenario.subject}`, kind: row.kind, signal: row.signal });
      expect(found[0]?.detail).not.toBe('');
      expect(found[0]?.show).toMatch(/mesh-control /);
    });

    test('finds nothing once the signal is gone, so its condition is cleared', async () => {
      const view = new FakeView();
      scenario.start(view);
      scenario.end(view);
      expect(subjects(await row.look(view, at(scenario.boundMs + EPSILON_MS), SETTINGS))).not.toContain(scenario.subject);
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
