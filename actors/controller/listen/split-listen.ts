/** `HOST:PORT`, `[IPv6]:PORT` or a bare `PORT` (on 127.0.0.1), split; `problem` says why not. */
export type SplitListen = { host: string; portText: string } | { problem: string };

/**
 * The one reading of a `--…-listen` value both the metrics endpoint and the dashboard take, so
 * the two verbs cannot drift apart on what an address looks like. `example` is the port shown
 * in the bracket hint.
 */
export function splitListen(value: string, example: number): SplitListen {
  const text = value.trim();
  if (/^\d+$/.test(text)) return { host: '127.0.0.1', portText: text };
  const bracketed = /^\[([^\]]*)\]:(.*)$/.exec(text);
  if (bracketed !== null) return { host: bracketed[1] ?? '', portText: bracketed[2] ?? '' };
  const colon = text.lastIndexOf(':');
  if (colon < 0) return { problem: 'there is no port (HOST:PORT)' };
  const host = text.slice(0, colon);
  if (host.includes(':')) return { problem: `an IPv6 address goes in brackets, as [::1]:${example}` };
  return { host, portText: text.slice(colon + 1) };
}
