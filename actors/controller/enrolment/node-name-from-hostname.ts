/** The name a machine gets when nothing better is known: its host name said nothing usable. */
export const FALLBACK_NODE_NAME = 'node';

const MAX_LABEL = 63;

/**
 * A node name (one DNS label) from a machine's host name: its first label, lowercased, every
 * run of characters a label cannot hold made one `-`, no `-` at either end, at most 63
 * characters. `Work_Station.example.com` becomes `work-station`.
 */
export function nodeNameFromHostname(hostname: string): string {
  const first = hostname.split('.')[0] ?? '';
  const label = trimDashes(first.toLowerCase().replace(/[^a-z0-9]+/g, '-')).slice(0, MAX_LABEL);
  const name = trimDashes(label);
  return name === '' ? FALLBACK_NODE_NAME : name;
}

/**
 * `base` if it is free, else `base-2`, `base-3`, … — the first that is. The base is shortened
 * when the suffix would take the name past 63 characters, so the result is always a label.
 */
export function uniqueNodeName(base: string, isTaken: (name: string) => boolean): string {
  if (!isTaken(base)) return base;
  for (let n = 2; ; n += 1) {
    const suffix = `-${n}`;
    const candidate = `${trimDashes(base.slice(0, MAX_LABEL - suffix.length))}${suffix}`;
    if (!isTaken(candidate)) return candidate;
  }
}

function trimDashes(text: string): string {
  return text.replace(/^-+|-+$/g, '');
}
