import type { HostStatus } from '../run/host-status';

/**
 * The status for a person, one fact a line:
 *
 * ```
 * lifecycle         enrolled.operating (node web-1, process 812)
 * linked            for 2 h 5 min (since 2026-12-03T09:12:00.000Z)
 * last pass         4 min ago (drift): converged; 3 unchanged
 * last declaration  generation 7 (full, epoch 2, 3 resources), taken 1 h ago
 * ```
 */
export function formatStatus(status: HostStatus, now: Date): string {
  const lines: Array<[string, string]> = [['lifecycle', `${status.lifecycle} (${status.node === null ? '' : `node ${status.node}, `}process ${status.pid})`]];
  if (status.node !== null) {
    lines.push(['linked', status.linked_since !== null
      ? `for ${ago(status.linked_since, now)} (since ${status.linked_since})`
      : status.last_linked_at === null ? 'no: never linked' : `no: last linked ${ago(status.last_linked_at, now)} ago (${status.last_linked_at})`]);
    const pass = status.last_pass;
    lines.push(['last pass', pass === null ? 'none yet' : `${ago(pass.at, now)} ago (${pass.reasons.join(', ')}): ${pass.outcome}; ${countsText(pass.counts)}`]);
    const held = status.last_declaration;
    lines.push(['last declaration', held === null ? 'none' : `generation ${held.generation} (${held.kind}, epoch ${held.epoch}, ${held.resources} resources), ${held.taken_at === null ? 'held since before the host started' : `taken ${ago(held.taken_at, now)} ago`}`]);
  }
  if (status.revoked !== undefined) lines.push(['revoked', status.revoked.detail]);
  if (status.certificate_unpinned !== undefined) lines.push(['certificate', `not pinned since ${status.certificate_unpinned.since}: ${status.certificate_unpinned.detail}`]);
  const width = Math.max(...lines.map(([name]) => name.length));
  return lines.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
}

function countsText(counts: Record<string, number>): string {
  const parts = Object.entries(counts).map(([outcome, count]) => `${count} ${outcome}`);
  return parts.length === 0 ? 'nothing to do' : parts.join(', ');
}

/** How long ago `at` was, roughly: `12 s`, `4 min`, `2 h 5 min`, `3 d 4 h`. */
function ago(at: string, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - new Date(at).getTime()) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}
