import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadControllerConfig } from '../config/load-controller-config';
import { freePort } from '../../shared/testing/free-port';

// `mesh-control broker cluster` and `broker --server` as a person runs them, each its own
// process from bin/, on a mesh `mesh-control init` made.

const root = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(root, 'bin', 'mesh-control');

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: root, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

describe('mesh-control broker cluster', () => {
  let dir: string;
  let ports: number[];

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh broker-cluster-cli '));
    ports = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const made = await run(['init', '--dir', dir, '--broker-url', `tls://127.0.0.1:${ports[0]}`, '--json']);
    expect(made.code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('refuses a server it cannot read, naming the shape, and writes nothing', async () => {
    const result = await run(['broker', 'cluster', '--dir', dir, '--server', 'a=127.0.0.1:4222', '--json']);
    expect(result.code).toBe(1);
    const error = (JSON.parse(result.stdout) as { error: { what: string; next: string } }).error;
    expect(error.what).toContain('NAME=HOST:CLIENT_PORT:ROUTE_PORT');
    expect(error.next).toContain('--server');
    await expect(fs.access(path.join(dir, 'broker', 'cluster'))).rejects.toThrow();
    expect((await loadControllerConfig(dir)).broker.servers).toBeUndefined();
  }, 60_000);

  test('writes three servers, and mesh.json names them all with three replicas', async () => {
    const servers = [0, 1, 2].map((index) => `s${index + 1}=127.0.0.1:${ports[index * 2]}:${ports[index * 2 + 1]}`);
    const result = await run(['broker', 'cluster', '--dir', dir, ...servers.flatMap((server) => ['--server', server]), '--json']);
    expect(result.code).toBe(0);
    const made = JSON.parse(result.stdout) as { urls: string[]; replicas: number; configFiles: Record<string, string> };
    const urls = [0, 1, 2].map((index) => `tls://127.0.0.1:${ports[index * 2]}`);
    expect(made.urls).toEqual(urls);
    expect(made.replicas).toBe(3);
    const config = await loadControllerConfig(dir);
    expect(config.broker.servers).toEqual(urls);
    expect(config.broker.replicas).toBe(3);
    expect(config.broker.url).toBe(urls[0]);
    const s2 = await fs.readFile(made.configFiles.s2!, 'utf8');
    expect(s2).toContain(`listen: "127.0.0.1:${ports[2]}"`);
    expect(s2).toMatch(/cluster \{[\s\S]*verify: true[\s\S]*routes: \["tls:\/\/127\.0\.0\.1:\d+", "tls:\/\/127\.0\.0\.1:\d+", "tls:\/\/127\.0\.0\.1:\d+"\]/);
    // Every server presents the certificate the mesh's tokens pin.
    expect(s2).toContain(`cert_file: "${path.join(dir, 'broker', 'tls', 'broker.crt')}"`);
  }, 60_000);

  test('refuses to write a second cluster over the first, saying what to do', async () => {
    const result = await run(['broker', 'cluster', '--dir', dir, '--server', 'x=127.0.0.1:1:2', '--server', 'y=127.0.0.1:3:4']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('already holds a cluster');
    expect(result.stderr).toMatch(/next: /);
  }, 60_000);

  test('mesh-control broker --server names the servers it has when given another', async () => {
    const result = await run(['broker', '--dir', dir, '--server', 'nope']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('it has s1, s2, s3');
  }, 60_000);
});
