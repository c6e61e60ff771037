import { readFileSync } from 'node:fs';
import net from 'node:net';

/** The lowest port a test takes: below it are the well-known and registered ports most services use. */
const LOWEST = 10_000;

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: one below the system's ephemeral range,
 * bound, read, and released. A port the system hands out for port 0 comes from the ephemeral
 * range, where any outgoing connection may take it as its local port before the caller binds it
 * (seen: a test cluster's server refused with "address already in use"); below the range only
 * another listener can. A caller that can retry still does.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralLow();
  for (let tries = 0; below > LOWEST && tries < 50; tries += 1) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (await canListen(port)) return port;
  }
  return listenOn(0);
}

/** The first port of the ephemeral range (Linux), 32768 when it cannot be read. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

async function canListen(port: number): Promise<boolean> {
  try {
    await listenOn(port);
    return true;
  } catch {
    return false;
  }
}

/** Listens on `port` of 127.0.0.1, closes, and answers the port that was bound. */
function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}
