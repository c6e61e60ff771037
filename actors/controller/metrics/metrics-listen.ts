import net from 'node:net';
import { splitListen } from '../listen/split-listen';
import { MetricsListenInvalid, MetricsListenNotLoopback } from './metrics-errors';

/** Where the metrics endpoint listens. */
export interface MetricsListen {
  /** An IP address (or `localhost`), as `net.Server.listen` takes it. */
  host: string;
  port: number;
}

/** What {@link parseMetricsListen} may allow. */
export interface MetricsListenRules {
  /** The operator said other machines may scrape (`--metrics-allow-remote`). */
  allowRemote?: boolean;
}

/**
 * `--metrics-listen`'s value: `HOST:PORT`, `[IPv6]:PORT`, or a bare `PORT` on 127.0.0.1. The
 * endpoint answers without credentials, so only a loopback address (127.0.0.0/8, ::1,
 * localhost) is taken unless `allowRemote`; a name other than localhost is refused then too,
 * since what it resolves to cannot be judged here.
 */
export function parseMetricsListen(value: string, rules: MetricsListenRules = {}): MetricsListen {
  if (value.includes('/')) throw new MetricsListenInvalid(value, 'it is an address and a port, without a scheme or a path (the path is always /metrics)');
  const split = splitListen(value, 9464);
  if ('problem' in split) throw new MetricsListenInvalid(value, split.problem);
  const { host, portText } = split;
  if (value.trim().startsWith('[') && !net.isIPv6(host)) throw new MetricsListenInvalid(value, `"${host}" in brackets is not an IPv6 address`);
  if (host === '') throw new MetricsListenInvalid(value, 'there is no address before the port');
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    throw new MetricsListenInvalid(value, `"${portText}" is not a port from 1 to 65535`);
  }
  const isName = net.isIP(host) === 0;
  if (isName && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host)) throw new MetricsListenInvalid(value, `"${host}" is neither an IP address nor a host name`);
  if (!rules.allowRemote && !isLoopback(host)) throw new MetricsListenNotLoopback(value);
  return { host, port: Number(portText) };
}

/** True for 127.0.0.0/8, ::1 (and ::ffff:127.x.y.z) and the name localhost. */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const v4 = host.toLowerCase().startsWith('::ffff:') ? host.slice(7) : host;
  if (net.isIPv4(v4)) return v4.startsWith('127.');
  if (net.isIPv6(host)) {
    const blocks = new net.SocketAddress({ address: host, family: 'ipv6' }).address;
    return blocks === '::1';
  }
  return false;
}

/** The endpoint's URL as the log and a person say it. */
export function metricsUrl(listen: MetricsListen): string {
  return `http://${net.isIPv6(listen.host) ? `[${listen.host}]` : listen.host}:${listen.port}/metrics`;
}
