import net from 'node:net';
import { startFreezeProxy, type FreezeProxy } from './freeze-proxy';

// The proxy in front of a small echo server: what goes in comes back, unless the proxy holds it.

let echo: net.Server;
let proxy: FreezeProxy;
const sockets: net.Socket[] = [];
const echoed: net.Socket[] = [];
const closeEchoSide = (): void => { for (const socket of echoed) socket.destroy(); };

beforeEach(async () => {
  echo = net.createServer((socket) => {
    echoed.push(socket);
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
  proxy = await startFreezeProxy({ port: (echo.address() as net.AddressInfo).port });
});
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.length = 0;
  await proxy.close();
  closeEchoSide();
  echoed.length = 0;
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

/** A client through the proxy that keeps what it receives and whether it was closed. */
async function client(): Promise<{ socket: net.Socket; received: () => string; closed: () => boolean; error: () => string | undefined }> {
  const socket = net.connect({ host: '127.0.0.1', port: proxy.port });
  sockets.push(socket);
  let received = '';
  let closed = false;
  let error: string | undefined;
  socket.on('data', (chunk: Buffer) => { received += chunk.toString(); });
  socket.on('close', () => { closed = true; });
  socket.on('error', (e: NodeJS.ErrnoException) => { error = e.code; });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, received: () => received, closed: () => closed, error: () => error };
}

async function until(what: string, look: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!look()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the freeze proxy', () => {
  test('forwards both ways, and counts the connection', async () => {
    const c = await client();
    c.socket.write('ping');
    await until('the echo', () => c.received() === 'ping');
    expect(proxy.connections().map((p) => p.id)).toEqual([1]);
    expect(proxy.open()).toHaveLength(1);
  });

  test('a frozen connection stays open and carries nothing until it is thawed', async () => {
    const c = await client();
    c.socket.write('a');
    await until('the first echo', () => c.received() === 'a');
    proxy.freeze();
    c.socket.write('b');
    await pause(150);
    expect(c.received()).toBe('a');
    expect(c.closed()).toBe(false);
    expect(proxy.open()[0]?.frozen).toBe(true);
    proxy.thaw();
    await until('the held bytes', () => c.received() === 'ab');
  });

  test('a close on the far side does not reach a frozen client until the connection thaws', async () => {
    const c = await client();
    c.socket.write('x');
    await until('the echo', () => c.received() === 'x');
    proxy.freeze();
    closeEchoSide();
    await pause(150);
    expect(c.closed()).toBe(false);
    proxy.thaw();
    await until('the close', () => c.closed());
  });

  test('a client that closes a frozen connection is seen to close, while the far side does not hear of it', async () => {
    const c = await client();
    c.socket.write('x');
    await until('the echo', () => c.received() === 'x');
    const [pair] = proxy.open();
    proxy.freeze();
    c.socket.destroy();
    await pair!.clientEnded;
    expect(pair!.clientClosed).toBe(true);
    expect(pair!.closed).toBe(false);
    expect(proxy.open()).toEqual([]);
    expect(echoed[0]?.destroyed).toBe(false);
    proxy.thaw();
    await pair!.ended;
  });

  test('holds new connections frozen from the start when told to, and lets them through on restore', async () => {
    proxy.admit('hold');
    const c = await client();
    c.socket.write('held');
    await pause(150);
    expect(c.received()).toBe('');
    expect(c.closed()).toBe(false);
    proxy.restore();
    await until('the echo', () => c.received() === 'held');
  });

  test('refuses new connections with a reset while refusing, leaving open ones alone', async () => {
    const open = await client();
    proxy.admit('refuse');
    const refused = net.connect({ host: '127.0.0.1', port: proxy.port });
    sockets.push(refused);
    const code = await new Promise<string | undefined>((resolve) => {
      refused.on('error', (e: NodeJS.ErrnoException) => resolve(e.code));
      refused.on('close', () => resolve(undefined));
    });
    expect(code).toBe('ECONNRESET');
    expect(proxy.refusals()).toHaveLength(1);
    open.socket.write('still');
    await until('the echo on the open one', () => open.received() === 'still');
    expect(proxy.connections()).toHaveLength(1);
  });

  test('cuts open connections, and says when each has ended', async () => {
    const c = await client();
    const [pair] = proxy.open();
    proxy.cut();
    await pair?.ended;
    expect(pair?.closed).toBe(true);
    await until('the client to see it', () => c.closed());
  });

  test('tells the next connection accepted', async () => {
    const next = proxy.nextConnection(2_000);
    await client();
    expect((await next).id).toBe(1);
    await expect(proxy.nextConnection(50)).rejects.toThrow(/no connection reached the proxy within 50 ms \(1 so far\)/);
  });
});
