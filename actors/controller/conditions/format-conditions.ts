import type { Condition, ConditionEvent } from '../../../schema/condition';
import { formatSpan } from '../nodes/format-span';
import { isSilenced } from './condition-store';

/** One condition in a line: severity (or silenced), id, what is wrong, since when, how often. */
export function conditionLine(condition: Condition, now: Date): string {
  const silenced = isSilenced(condition, now) && condition.silence !== null ? `silenced until ${condition.silence.until} by ${condition.silence.by}: ${condition.silence.why}; ` : '';
  const tag = condition.state === 'cleared' ? 'cleared' : condition.severity;
  const age = formatSpan(Math.max(0, now.getTime() - Date.parse(condition.raised_at)));
  return `${tag.toUpperCase()} ${condition.id}: ${condition.detail} (${silenced}raised ${age} ago${condition.count > 1 ? `, ${condition.count} times` : ''}; next: ${condition.show})`;
}

/** The open conditions, in the order given (urgent first), or that none is open. */
export function formatConditionList(conditions: readonly Condition[], now: Date): string {
  if (conditions.length === 0) return 'no condition open';
  return conditions.map((condition) => conditionLine(condition, now)).join('\n');
}

/** One condition in full. */
export function formatCondition(condition: Condition, now: Date): string {
  const lines = [
    `condition ${condition.id}: ${condition.state}, ${condition.severity} (signal ${condition.signal}, ${condition.kind} of ${condition.subject})`,
    `  ${condition.detail}`,
    `  raised ${condition.raised_at}; last changed ${condition.changed_at}${condition.cleared_at === null ? '' : `; cleared ${condition.cleared_at}`}; raised ${condition.count} time${condition.count === 1 ? '' : 's'}; epoch ${condition.epoch}`,
  ];
  if (condition.silence !== null) {
    const running = Date.parse(condition.silence.until) > now.getTime();
    lines.push(`  silence${running ? '' : ' (ended)'}: by ${condition.silence.by} at ${condition.silence.at} until ${condition.silence.until}: ${condition.silence.why}`);
  }
  lines.push(`  next: ${condition.show}`);
  return lines.join('\n');
}

/** Transitions, newest first, one a line. */
export function formatConditionHistory(events: readonly ConditionEvent[]): string {
  if (events.length === 0) return 'no transition kept';
  return events.map((event) => `${event.at} ${event.event.replace('condition-', '')} ${event.id}: ${event.change}${event.why === null ? '' : ` (why: ${event.why})`}`).join('\n');
}
