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
});
