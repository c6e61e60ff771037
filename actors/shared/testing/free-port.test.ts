import { readFileSync } from 'node:fs';
import net from 'node:net';
import { freePort } from './free-port';

describe('freePort', () => {
  test('answers a port of 127.0.0.1 that a server can then listen on', async () => {
    const port = await freePort();

    expect(port).toBeGreaterThan(0);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    expect((server.address() as net.AddressInfo).port).toBe(port);
    await new Promise((resolve) => server.close(resolve));
  });

  test('answers a port below the ephemeral range, which outgoing connections never take', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
    }
  });
});
