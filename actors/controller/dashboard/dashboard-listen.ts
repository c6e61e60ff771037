import net from 'node:net';
import { splitListen } from '../listen/split-listen';
import { isLoopback } from '../metrics/metrics-listen';
import { DashboardListenInvalid } from './dashboard-errors';

/** Where the dashboard listens unless `--listen` says otherwise. */
export const DEFAULT_DASHBOARD_LISTEN = '127.0.0.1:8470';

/** A loopback address and a port (0: any free one). */
export interface DashboardListen {
  host: string;
  port: number;
}

/**
 * `--listen`'s value: `HOST:PORT`, `[::1]:PORT` or a bare `PORT` on 127.0.0.1. Only a loopback
 * address is taken: the page travels as plain HTTP, so its session cookie must not cross a
 * network; another machine reaches it through an SSH tunnel. Port 0 takes a free one.
 */
export function parseDashboardListen(value: string): DashboardListen {
  const split = splitListen(value, 8470);
  if ('problem' in split) throw new DashboardListenInvalid(value, split.problem);
  let host = split.host;
  const portText = split.portText;
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new DashboardListenInvalid(value, `"${portText}" is not a port from 0 to 65535`);
  if (host.toLowerCase() === 'localhost') host = '127.0.0.1';
  if (net.isIP(host) === 0) throw new DashboardListenInvalid(value, `"${host}" is not an IP address`);
  if (!isLoopback(host)) throw new DashboardListenInvalid(value, `${host} is not a loopback address, and the page and its session cookie travel unencrypted`);
  return { host, port: Number(portText) };
}

/** `http://HOST:PORT`, with an IPv6 address in brackets. */
export function dashboardOrigin(host: string, port: number): string {
  return `http://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
}
