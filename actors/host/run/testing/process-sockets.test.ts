import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { listeningSockets } from './process-sockets';

// The no-listening-socket tests lean on this reader; here it is shown to see a listener when
// there is one, of each kind it claims to find.

async function started(script: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', `${script}; console.log('ready'); setInterval(() => {}, 1000)`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout!, 'data');
  return child;
}

async function stopped(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  await once(child, 'exit');
}

describe('reading a process\'s sockets from /proc', () => {
  test.each([
    ['a TCP listener', "require('net').createServer().listen(0, '127.0.0.1')", 'tcp'],
    ['a TCP6 listener', "require('net').createServer().listen(0, '::1')", 'tcp6'],
    ['a bound UDP socket', "require('dgram').createSocket('udp4').bind(0, '127.0.0.1')", 'udp'],
    ['a unix socket listener', `require('net').createServer().listen('\\0mesh-test-' + process.pid)`, 'unix'],
  ])('finds %s', async (_name, script, table) => {
    const child = await started(script);
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await listeningSockets(child.pid!)).map((socket) => socket.table)).toContain(table);
    } finally {
      await stopped(child);
    }
  });

  test('finds nothing listening in a process that only dials out', async () => {
    const child = await started("require('net').connect(9, '127.0.0.1').on('error', () => {})");
    try {
      expect(await listeningSockets(child.pid!)).toEqual([]);
    } finally {
      await stopped(child);
    }
  });
});
