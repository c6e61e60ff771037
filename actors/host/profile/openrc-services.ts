import type { InventoryService } from './systemd-services';

// ANSI colour sequences, in case rc-status colours its output despite not writing to a terminal.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * Reads `rc-status --all`: `Runlevel: NAME` headings for the runlevels, `Dynamic Runlevel: …`
 * headings for services started without one (`hotplugged`, `needed/wanted`, `manual`), and
 * under each a service line `NAME [ state ]`. A service in any real runlevel is enabled; one
 * listed only under a dynamic heading is not. Each service is listed once, by name.
 */
export function parseRcStatus(text: string): InventoryService[] {
  const services = new Map<string, InventoryService>();
  let inRunlevel = false;
  for (const rawLine of text.replace(ANSI, '').split('\n')) {
    if (/^\s*Dynamic Runlevel:/.test(rawLine)) {
      inRunlevel = false;
      continue;
    }
    if (/^\s*Runlevel:/.test(rawLine)) {
      inRunlevel = true;
      continue;
    }
    const match = /^\s+(\S+)\s+\[\s*([a-z]+)[^\]]*\]\s*$/.exec(rawLine);
    if (match === null) continue;
    const [, name, word] = match as unknown as [string, string, string];
    const seen = services.get(name);
    services.set(name, { name, state: seen?.state ?? serviceState(word), enabled: (seen?.enabled ?? false) || inRunlevel });
  }
  return [...services.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function serviceState(word: string): InventoryService['state'] {
  switch (word) {
    case 'started':
      return 'running';
    case 'stopped':
      return 'stopped';
    case 'crashed':
    case 'failed':
      return 'failed';
    default:
      // starting, stopping, inactive (started, waiting for something), scheduled.
      return 'unknown';
  }
}
