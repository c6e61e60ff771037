import type { Inventory } from '../../../schema/inventory';
import { inventoryWord } from './inventory-word';

/** One container as the inventory lists it. */
export type InventoryContainer = Inventory['containers'][number];

const STATE = /^[a-z-]{1,32}$/;

/**
 * Reads a container engine's list of every container (`docker ps -a --format '{{json .}}'`:
 * one JSON object a line, `Names` a comma-separated string; `podman ps -a --format json`: one
 * JSON array, `Names` an array). A line that is not JSON, or an entry without a name or image,
 * is skipped. The first name is the container's own; later ones are legacy link aliases.
 */
export function parseContainerList(text: string): InventoryContainer[] {
  const trimmed = text.trim();
  const items: unknown[] = trimmed.startsWith('[') ? parseArray(trimmed) : trimmed.split('\n').map(parseLine);
  const containers: InventoryContainer[] = [];
  for (const item of items) {
    if (item === null || typeof item !== 'object') continue;
    const record = item as Record<string, unknown>;
    const names = record.Names;
    const first = Array.isArray(names) ? names[0] : typeof names === 'string' ? names.split(',')[0] : undefined;
    const name = inventoryWord(typeof first === 'string' ? first.replace(/^\//, '') : undefined);
    const image = inventoryWord(typeof record.Image === 'string' ? record.Image : undefined);
    if (name === undefined || image === undefined) continue;
    containers.push({ name, image, state: containerState(record.State, record.Status) });
  }
  return containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

// Docker before 1.13 had no State in its list, only the human Status ("Up 2 hours",
// "Exited (0) 3 days ago"); the state is read from its first words then.
function containerState(state: unknown, status: unknown): string {
  if (typeof state === 'string') {
    const word = state.trim().toLowerCase();
    if (STATE.test(word)) return word;
  }
  if (typeof status === 'string') {
    if (/\(Paused\)/.test(status)) return 'paused';
    if (/^Up\b/.test(status)) return 'running';
    const word = /^([A-Za-z]+)/.exec(status.trim())?.[1]?.toLowerCase();
    if (word !== undefined && STATE.test(word)) return word;
  }
  return 'unknown';
}

function parseArray(text: string): unknown[] {
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
