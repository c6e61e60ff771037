import { isIP } from 'node:net';

/** Where the broker listens: an address (or host name) and a port. */
export interface ListenAddress {
  host: string;
  port: number;
}

/**
 * Reads `HOST:PORT` (`0.0.0.0:4222`, `[::]:4222`, `mesh.example:4222`), as `init --listen` takes
 * it and the broker configuration writes it. Undefined when it is not that shape.
 */
export function parseListenAddress(text: string): ListenAddress | undefined {
  const match = /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$/.exec(text) ?? /^([A-Za-z0-9_.-]+):(\d{1,5})$/.exec(text);
  if (match === null) return undefined;
  const host = match[1] as string;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  if (text.startsWith('[') && isIP(host) !== 6) return undefined;
  return { host, port };
}

/** The address as `HOST:PORT`, an IPv6 address in brackets. */
export function formatListenAddress(address: ListenAddress): string {
  return isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
