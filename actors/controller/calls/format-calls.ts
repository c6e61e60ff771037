import type { ControlCall } from '../../../schema/control-call';
import { formatSpan } from '../nodes/format-span';

/** The calls as a table for a person, newest first. */
export function formatCallList(calls: readonly ControlCall[]): string {
  if (calls.length === 0) return 'no calls kept';
  const rows = calls.map((call) => [call.id, call.verb, call.state, call.started_at, call.took_ms === null ? '-' : tookText(call.took_ms)]);
  const header = ['ID', 'VERB', 'STATE', 'STARTED', 'TOOK'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  return [header, ...rows].map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ')).join('\n');
}

/** One call in full for a person: who, when, how it ended, and the answer or refusal as given. */
export function formatCall(call: ControlCall): string {
  const lines = [
    `call ${call.id}: ${call.verb}${call.args.length === 0 ? '' : ` (arguments: ${call.args.join(', ')})`}`,
    `  called by ${call.caller}; taken by ${call.controller}${call.epoch === null ? '' : ` under epoch ${call.epoch}`}`,
    `  started ${call.started_at}; ${call.state}${call.took_ms === null ? '' : ` after ${tookText(call.took_ms)}`}`,
  ];
  if (call.answer !== null) {
    lines.push('  answer:', ...indent(call.answer.text));
    if (call.answer.truncated) lines.push('  (the answer was longer than is kept and was cut)');
  }
  if (call.error !== null) {
    lines.push(`  ${call.state === 'abandoned' ? 'abandoned' : 'error'}: ${call.error.what}${call.error.value === undefined ? '' : `: ${JSON.stringify(call.error.value)}`}`);
    lines.push(`  next: ${call.error.next}`);
  }
  return lines.join('\n');
}

function tookText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : formatSpan(ms);
}

function indent(text: string): string[] {
  return text.split('\n').map((line) => `    ${line}`);
}
