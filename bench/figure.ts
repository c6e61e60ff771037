import { summarise, type Summary } from './stats';

/** What a figure is counted in. */
export type FigureUnit = 'ms' | 'MB' | '%' | 'count';

/**
 * The target a figure is held to: met when the chosen statistic is at or under `max`. `text`
 * is the goal as the issue states it, for the table.
 */
export interface Goal {
  text: string;
  max: number;
  on: 'median' | 'p99';
}

/**
 * What the same work costs without the project, measured beside a figure in the same run and in
 * the figure's unit: the raw broker round trip beside a network figure, Node itself beside the
 * host's memory.
 */
export interface Floor {
  label: string;
  summary: Summary;
}

/** One row of the table and of results/*.json. Field names are snake_case: it is a file format. */
export interface Figure {
  /** Stable, for comparing runs: `host.apply.bundle`, `fleet.push.1000`. */
  id: string;
  /** The section it belongs to: host, enrolment, fleet, heartbeat, link, controller, peers. */
  group: string;
  label: string;
  unit: FigureUnit;
  /** measured; not_measured (and `note` says why, or what it arrives with); failed (and `note` says how). */
  status: 'measured' | 'not_measured' | 'failed';
  summary: Summary | null;
  goal: Goal | null;
  /** Whether the goal is met; null without a goal or without a measurement. */
  met: boolean | null;
  floor: Floor | null;
  /** The figure's median over the floor's: how many broker round trips the work costs, or how many runtimes' worth of memory. */
  ratio_to_floor: number | null;
  note: string | null;
}

/** Where a figure goes and how it is read. */
export interface FigureHead {
  id: string;
  group: string;
  label: string;
  unit: FigureUnit;
}

/** Options of a measured figure. */
export interface MeasuredOptions {
  goal?: Goal;
  floor?: Floor;
  note?: string;
}

/** A figure from repeated runs' values, judged against its goal and set beside its floor. */
export function measured(head: FigureHead, values: readonly number[], options: MeasuredOptions = {}): Figure {
  const summary = summarise(values.map((value) => round(value)));
  const goal = options.goal ?? null;
  const floor = options.floor ?? null;
  return {
    ...head,
    status: 'measured',
    summary,
    goal,
    met: goal === null ? null : summary[goal.on] <= goal.max,
    floor,
    ratio_to_floor: floor === null || floor.summary.median <= 0 ? null : round(summary.median / floor.summary.median),
    note: options.note ?? null,
  };
}

/** A figure that has no numbers yet: `why` says what it waits for. */
export function notMeasured(head: FigureHead, why: string, goal?: Goal): Figure {
  return { ...head, status: 'not_measured', summary: null, goal: goal ?? null, met: null, floor: null, ratio_to_floor: null, note: why };
}

/** A figure whose measurement broke: `error` says how, so the table never hides it. */
export function failed(head: FigureHead, error: unknown, goal?: Goal): Figure {
  const message = error instanceof Error ? error.message : String(error);
  return { ...head, status: 'failed', summary: null, goal: goal ?? null, met: null, floor: null, ratio_to_floor: null, note: firstLines(message, 3) };
}

/** A floor from its repeated values, in the unit of the figure it is set beside. */
export function floorOf(label: string, values: readonly number[]): Floor {
  return { label, summary: summarise(values.map((value) => round(value))) };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function firstLines(text: string, count: number): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return lines.slice(0, count).join(' / ') + (lines.length > count ? ' …' : '');
}
