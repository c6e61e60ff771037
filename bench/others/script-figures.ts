import type { FigureHead, FigureUnit } from '../figure';

/** One figure a script printed: what it measured and every run's value. */
export interface ScriptFigure {
  head: FigureHead;
  values: number[];
}

/** The JSON line a script may print for the runner: `{"bench_figures": [...]}`. */
interface BenchFiguresLine {
  bench_figures: Array<{ id: string; label: string; unit?: FigureUnit; values: number[] }>;
}

/**
 * The figures in a script's output, read two ways. Preferred: one line of JSON,
 * `{"bench_figures": [{"id": "…", "label": "…", "unit": "ms", "values": [..]}]}`. Otherwise
 * the per-run lines a person reads, `run <n>  <what>  <value> ms`, grouped by what, in order
 * of first appearance. `group` and `idPrefix` place them in the table.
 */
export function scriptFigures(stdout: string, group: string, idPrefix: string): ScriptFigure[] {
  for (const line of stdout.split('\n').reverse()) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{')) continue;
    try {
      const parsed = JSON.parse(trimmed) as Partial<BenchFiguresLine>;
      if (!Array.isArray(parsed.bench_figures)) continue;
      return parsed.bench_figures
        .filter((figure) => Array.isArray(figure.values) && figure.values.length > 0 && figure.values.every((value) => typeof value === 'number'))
        .map((figure) => ({ head: { id: `${idPrefix}.${figure.id}`, group, label: figure.label, unit: figure.unit ?? 'ms' }, values: figure.values }));
    } catch {
      // Not the JSON line: keep looking.
    }
  }
  const runs = new Map<string, number[]>();
  for (const line of stdout.split('\n')) {
    const match = /^\s*run\s+\d+\s+(.+?)\s+(\d+(?:\.\d+)?)\s*ms\s*$/.exec(line);
    if (match === null) continue;
    const what = match[1] as string;
    runs.set(what, [...(runs.get(what) ?? []), Number(match[2])]);
  }
  return [...runs].map(([what, values]) => ({
    head: { id: `${idPrefix}.${what.replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, '').toLowerCase()}`, group, label: what, unit: 'ms' },
    values,
  }));
}
