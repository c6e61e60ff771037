import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createUser } from '@nats-io/nkeys';
import { ProcessRunner } from '../../shared/process/command-runner';
import { writeAuthFile } from './auth-file';
import { brokerConfigFor, renderBrokerConfig, writeBrokerConfig, type BrokerConfig } from './broker-config';
import { BrokerConfigInvalid } from './broker-errors';
import { brokerPaths } from './broker-paths';
import { natsString } from './nats-conf-string';
import { generateTlsMaterial } from './tls-material';

const example: BrokerConfig = {
  serverName: 'mesh-broker',
  listen: { host: '0.0.0.0', port: 4222 },
  tls: { certFile: '/var/lib/mesh/broker/tls/broker.crt', keyFile: '/var/lib/mesh/broker/tls/broker.key', timeoutSeconds: 5 },
  jetstream: { storeDir: '/var/lib/mesh/broker/jetstream', maxMemoryStore: 268435456, maxFileStore: 1073741824 },
  pidFile: '/var/lib/mesh/broker/nats-server.pid',
  logFile: '/var/lib/mesh/broker/nats-server.log',
  authInclude: 'auth.conf',
};

describe('renderBrokerConfig', () => {
  test('writes listen, TLS, JetStream, pid and log files and includes the user list', () => {
    expect(renderBrokerConfig(example)).toBe([
      '# The Novox Mesh broker. mesh-control writes this file whole; edits here are lost.',
      '# Users and their permissions are in the included file, rewritten as nodes come and go.',
      'server_name: "mesh-broker"',
      'listen: "0.0.0.0:4222"',
      'pid_file: "/var/lib/mesh/broker/nats-server.pid"',
      'log_file: "/var/lib/mesh/broker/nats-server.log"',
      '',
      '# Every client connection is TLS; nodes pin this certificate by its fingerprint.',
      'tls {',
      '  cert_file: "/var/lib/mesh/broker/tls/broker.crt"',
      '  key_file: "/var/lib/mesh/broker/tls/broker.key"',
      '  timeout: 5',
      '}',
      '',
      'jetstream {',
      '  store_dir: "/var/lib/mesh/broker/jetstream"',
      '  max_memory_store: 268435456',
      '  max_file_store: 1073741824',
      '}',
      '',
      'include "auth.conf"',
      '',
    ].join('\n'));
  });

  test('follows from a broker directory, with the defaults an operator would expect', () => {
    expect(brokerConfigFor(brokerPaths('/var/lib/mesh/broker'))).toEqual(example);
  });

  test('puts an IPv6 listen address in brackets', () => {
    expect(renderBrokerConfig({ ...example, listen: { host: '::', port: 4222 } })).toContain('listen: "[::]:4222"');
  });

  test('refuses what nats-server would refuse or misread', () => {
    const refused: Array<Partial<BrokerConfig>> = [
      { serverName: 'mesh broker' },
      { listen: { host: '0.0.0.0', port: 0 } },
      { listen: { host: 'a host', port: 4222 } },
      { pidFile: 'relative/nats.pid' },
      { authInclude: 'auth".conf' },
      { authInclude: '../auth.conf' },
      { tls: { ...example.tls, timeoutSeconds: 0 } },
      { jetstream: { ...example.jetstream, maxFileStore: 1.5 } },
    ];
    for (const change of refused) expect(() => renderBrokerConfig({ ...example, ...change })).toThrow(BrokerConfigInvalid);
  });
});

describe('natsString', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh conf-'));
  });

  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('escapes only what nats-server\'s double-quoted strings need', () => {
    expect(natsString('plain /path with space')).toBe('"plain /path with space"');
    expect(natsString('a"b\\c\nd\te\x01')).toBe('"a\\"b\\\\c\\nd\\te\\x01"');
    expect(natsString('$HOME #not-a-comment')).toBe('"$HOME #not-a-comment"');
  });

  test('nats-server reads a quoted path back as the very same path', async () => {
    // Spaces, quotes, a backslash, a would-be variable, a would-be comment, UTF-8.
    const odd = path.join(dir, '1 "quoted" back\\slash $HOME #hash \'single\' ü');
    await fs.mkdir(odd);
    const pidFile = path.join(odd, 'server.pid');
    const configFile = path.join(dir, 'odd.conf');
    await fs.writeFile(configFile, `listen: "127.0.0.1:-1"\npid_file: ${natsString(pidFile)}\nlog_file: ${natsString(path.join(odd, 'server.log'))}\n`);
    const server = spawn('nats-server', ['-c', configFile], { stdio: 'ignore' });
    try {
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && !(await fs.access(pidFile).then(() => true, () => false))) await sleep(20);
      expect((await fs.readFile(pidFile, 'utf8')).trim()).toBe(String(server.pid));
    } finally {
      server.kill('SIGKILL');
    }
  });
});

describe('writeBrokerConfig', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh conf write-'));
  });

  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('writes a configuration nats-server accepts, with its user list and TLS material, from a directory with a space', async () => {
    const paths = brokerPaths(path.join(dir, 'mesh dir', 'broker'));
    await generateTlsMaterial({ keyFile: paths.keyFile, certFile: paths.certFile, subjectAltNames: ['localhost'] });
    await writeBrokerConfig(paths.configFile, brokerConfigFor(paths, { port: 14999 }));
    await writeAuthFile(paths.authFile, [{ role: 'controller', nkey: createUser().getPublicKey() }]);
    const checked = await new ProcessRunner().run(['nats-server', '-t', '-c', paths.configFile]);
    expect(`${checked.stdout}${checked.stderr}`).toContain('is valid');
    expect(checked.code).toBe(0);
    expect((await fs.stat(paths.storeDir)).isDirectory()).toBe(true);
  });

  test('rewriting an unchanged configuration writes the same bytes', async () => {
    const paths = brokerPaths(path.join(dir, 'again'));
    await writeBrokerConfig(paths.configFile, brokerConfigFor(paths));
    const first = await fs.readFile(paths.configFile);
    await writeBrokerConfig(paths.configFile, brokerConfigFor(paths));
    expect((await fs.readFile(paths.configFile)).equals(first)).toBe(true);
  });
});
