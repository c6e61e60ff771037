import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { writeAuthFile } from './auth-file';
import { brokerConfigFor, writeBrokerConfig, type BrokerConfig } from './broker-config';
import { BrokerDidNotStart, BrokerNotRunning, BrokerReloadFailed, BrokerReloadUnconfirmed } from './broker-errors';
import { brokerPaths, type BrokerPaths } from './broker-paths';
import { reloadBroker, startBroker, type RunningBroker } from './broker-process';
import { probeBrokerTls } from './broker-tls-probe';
import { generateTlsMaterial } from './tls-material';

/** A broker directory with TLS material, a user list and a configuration for `port`. */
async function brokerDir(root: string, name: string, port: number): Promise<{ paths: BrokerPaths; config: BrokerConfig }> {
  const paths = brokerPaths(path.join(root, name));
  await generateTlsMaterial({ keyFile: paths.keyFile, certFile: paths.certFile, subjectAltNames: ['localhost', '127.0.0.1'] });
  await writeAuthFile(paths.authFile, [{ role: 'controller', nkey: createUser().getPublicKey() }]);
  const config = brokerConfigFor(paths, { host: '127.0.0.1', port, maxMemoryStore: 16 * 1024 * 1024, maxFileStore: 64 * 1024 * 1024 });
  await writeBrokerConfig(paths.configFile, config);
  return { paths, config };
}

/** A listening socket on a port of 127.0.0.1, holding that port until closed. */
async function occupiedPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('startBroker', () => {
  let root: string;
  const started: RunningBroker[] = [];

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh broker-process-'));
  });

  afterAll(async () => {
    await Promise.all(started.map((broker) => broker.stop()));
    await fs.rm(root, { recursive: true, force: true });
  });

  test('resolves once the server accepts TLS with its certificate, and stop ends it', async () => {
    const free = await occupiedPort();
    await free.release();
    const { paths, config } = await brokerDir(root, 'runs', free.port);
    const broker = await startBroker({ configFile: paths.configFile, config });
    started.push(broker);
    await expect(probeBrokerTls({ host: '127.0.0.1', port: free.port, caPem: await fs.readFile(paths.certFile, 'utf8') })).resolves.toBeUndefined();
    expect((await fs.readFile(paths.pidFile, 'utf8')).trim()).toBe(String(broker.pid));
    await broker.stop();
    expect(broker.running).toBe(false);
    expect(() => process.kill(broker.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });

  test('a port another process holds is BrokerDidNotStart quoting the server, and no server is left running', async () => {
    const held = await occupiedPort();
    try {
      const { paths, config } = await brokerDir(root, 'port-held', held.port);
      const failure = await startBroker({ configFile: paths.configFile, config }).then(() => undefined, (error: unknown) => error);
      expect(failure).toBeInstanceOf(BrokerDidNotStart);
      expect((failure as BrokerDidNotStart).addressInUse).toBe(true);
      expect((failure as BrokerDidNotStart).retryable).toBe(true);
      expect((failure as BrokerDidNotStart).detail).toContain(`127.0.0.1:${held.port}`);
      // nats-server writes its pid file before it binds the port.
      const pid = Number((await fs.readFile(paths.pidFile, 'utf8')).trim());
      expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    } finally {
      await held.release();
    }
  });

  test('a configuration nats-server refuses is BrokerDidNotStart with the server\'s reason', async () => {
    const { paths, config } = await brokerDir(root, 'bad-users', 4222);
    await fs.writeFile(paths.authFile, 'authorization { users: [ { nkey: "UNOTAKEY" } ] }\n');
    await expect(startBroker({ configFile: paths.configFile, config })).rejects.toMatchObject({
      name: 'BrokerDidNotStart',
      detail: expect.stringContaining('nkey'),
    });
  });

  test('a missing nats-server program says to install it', async () => {
    const { paths, config } = await brokerDir(root, 'no-program', 4222);
    await expect(startBroker({ configFile: paths.configFile, config, program: path.join(root, 'no-such-nats-server') })).rejects.toMatchObject({
      name: 'BrokerDidNotStart',
      next: expect.stringContaining('apt install nats-server'),
    });
  });
});

describe('reloading a broker', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker();
  });

  afterAll(async () => {
    await broker?.stop();
  });

  test('reloads by the pid file, as another process would, once the server confirms it', async () => {
    const paths = brokerPaths(broker.dir);
    const user = createUser();
    await writeAuthFile(paths.authFile, [{ role: 'controller', nkey: broker.controllerNkey }, { role: 'node', node: 'alpha', nkey: user.getPublicKey() }]);
    await reloadBroker({ pidFile: paths.pidFile, logFile: paths.logFile });
    await expect(broker.connectAsNode('alpha', user.getSeed(), { reconnect: false })).resolves.toBeDefined();
  });

  test('a user list the server refuses is BrokerReloadFailed with its reason, and the previous users still connect', async () => {
    const paths = brokerPaths(broker.dir);
    await fs.writeFile(paths.authFile, 'authorization { users: [ { nkey: "UNOTAKEY" } ] }\n');
    try {
      await expect(broker.reload()).rejects.toMatchObject({ name: 'BrokerReloadFailed', reason: expect.stringContaining('nkey') });
      const controller = await broker.connectAsController({ reconnect: false });
      await expect(controller.flush()).resolves.toBeUndefined();
    } finally {
      await writeAuthFile(paths.authFile, [{ role: 'controller', nkey: broker.controllerNkey }]);
      await broker.reload();
    }
  });

  test('a server that never answers is BrokerReloadUnconfirmed, not assumed reloaded', async () => {
    // A stand-in named nats-server that ignores SIGHUP and writes no log.
    const fake = path.join(broker.dir, 'nats-server');
    await fs.symlink('/bin/sleep', fake);
    const silent = spawn('sh', ['-c', `trap '' HUP; exec "${fake}" 30`], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await expect(reloadBroker({ pid: silent.pid as number, logFile: path.join(broker.dir, 'silent.log'), timeoutMs: 200 })).rejects.toBeInstanceOf(BrokerReloadUnconfirmed);
    } finally {
      silent.kill('SIGKILL');
    }
  });

  test('refuses to signal a pid file that names another program', async () => {
    const pidFile = path.join(broker.dir, 'stale.pid');
    // This very process: were it signalled, SIGHUP would end the test run.
    await fs.writeFile(pidFile, `${process.pid}\n`);
    await expect(reloadBroker({ pidFile, logFile: brokerPaths(broker.dir).logFile })).rejects.toMatchObject({
      name: 'BrokerNotRunning',
      value: expect.stringContaining('not nats-server'),
    });
  });

  test('a pid file naming no process, or no pid file, is BrokerNotRunning', async () => {
    const pidFile = path.join(broker.dir, 'gone.pid');
    await fs.writeFile(pidFile, '4194303\n');
    await expect(reloadBroker({ pidFile, logFile: brokerPaths(broker.dir).logFile })).rejects.toBeInstanceOf(BrokerNotRunning);
    await expect(reloadBroker({ pidFile: path.join(broker.dir, 'none.pid'), logFile: brokerPaths(broker.dir).logFile })).rejects.toBeInstanceOf(BrokerNotRunning);
  });

  test('a broker that has exited cannot be reloaded through its handle', async () => {
    const other = await startTestBroker();
    await other.broker.stop();
    await expect(other.broker.reload()).rejects.toBeInstanceOf(BrokerNotRunning);
    await other.stop();
  });
});

test('BrokerReloadFailed says that removed users can still connect', () => {
  expect(new BrokerReloadFailed('bad').next).toMatch(/removed users can still connect/);
});
