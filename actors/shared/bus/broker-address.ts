import { isIP } from 'node:net';
import { BrokerAddressInvalid } from './bus-errors';

/** nats-server's client port, used when a broker address names none. */
export const DEFAULT_BROKER_PORT = 4222;

/** Where to dial a broker, taken apart from its address (`tls://host:port`). */
export interface BrokerAddress {
  /** The address as given, for messages. */
  url: string;
  /** Host name or IP literal, without the brackets an IPv6 literal has in a URL. */
  host: string;
  port: number;
  /**
   * The TLS server name to send, or undefined for an IP literal (RFC 6066 forbids IP
   * addresses in SNI). The NATS client sends the same, so the probe sees the certificate the
   * real connection will be offered.
   */
  servername: string | undefined;
}

/**
 * Reads a broker address. `tls://` is what tokens and the host store carry; `nats://` is
 * accepted too because the TLS upgrade is the server's to demand, and the certificate check
 * does not depend on the scheme. Refuses anything with credentials, a path or another scheme.
 */
export function parseBrokerAddress(url: string): BrokerAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new BrokerAddressInvalid(url, error);
  }
  const usable =
    (parsed.protocol === 'tls:' || parsed.protocol === 'nats:') &&
    parsed.hostname !== '' &&
    parsed.username === '' &&
    parsed.password === '' &&
    (parsed.pathname === '' || parsed.pathname === '/') &&
    parsed.search === '' &&
    parsed.hash === '';
  if (!usable) throw new BrokerAddressInvalid(url);
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const port = parsed.port === '' ? DEFAULT_BROKER_PORT : Number(parsed.port);
  return { url, host, port, servername: isIP(host) === 0 ? host : undefined };
}
