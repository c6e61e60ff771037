import type { Figure, FigureUnit } from './figure';
import type { BenchResults } from './bench-results';

/**
 * The results as a Markdown table, one row per figure, grouped by section: what a person reads
 * in the terminal and in results/*.md. A figure without numbers says why in its note; a goal
 * missed says `no`, never a softer word.
 */
export function formatTable(results: BenchResults): string {
  const { machine } = results;
  const lines = [
    `Novox Mesh benchmarks: ${results.mode} run of ${results.started_at}, ${formatSeconds(results.duration_s)}`,
    `machine: ${machine.cores} cores (${machine.cpu_model}), ${machine.memory_gb} GB, Node ${machine.node}, ${machine.nats_server}, ${machine.os}${machine.work_file_system === undefined ? '' : `; ${machine.work_file_system}`}`,
    'median and p99 of repeated runs (p99 by nearest rank: the slowest run when there are fewer than 100)',
    '',
    '| figure | median | p99 | runs | goal | met | floor (median) | × floor | note |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  let group = '';
  for (const figure of results.figures) {
    if (figure.group !== group) {
      group = figure.group;
      lines.push(`| **${group}** | | | | | | | | |`);
    }
    lines.push(row(figure));
  }
  return `${lines.join('\n')}\n`;
}

function row(figure: Figure): string {
  const summary = figure.summary;
  const cells = [
    figure.label,
    summary === null ? (figure.status === 'failed' ? 'failed' : 'not measured') : formatValue(summary.median, figure.unit),
    summary === null ? '' : formatValue(summary.p99, figure.unit),
    summary === null ? '' : String(summary.runs),
    figure.goal?.text === undefined ? '' : `${figure.goal.on} ${figure.goal.text}`,
    figure.met === null ? '' : figure.met ? 'yes' : 'no',
    figure.floor === null ? '' : `${formatValue(figure.floor.summary.median, figure.unit)} (${figure.floor.label})`,
    figure.ratio_to_floor === null ? '' : `${figure.ratio_to_floor}×`,
    figure.note ?? '',
  ];
  return `| ${cells.map(escapeCell).join(' | ')} |`;
}

/** A value with its unit: milliseconds below ten seconds, seconds above. */
export function formatValue(value: number, unit: FigureUnit): string {
  if (unit === 'ms') return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : value >= 100 ? `${Math.round(value)} ms` : `${value.toFixed(1)} ms`;
  if (unit === 'MB') return `${value.toFixed(1)} MB`;
  if (unit === 'count') return String(Math.round(value));
  return `${value.toFixed(1)} %`;
}

function formatSeconds(seconds: number): string {
  return seconds >= 120 ? `${(seconds / 60).toFixed(1)} min` : `${Math.round(seconds)} s`;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}
