import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeToken } from '../../shared/crypto';
import { loadControllerConfig } from '../config/load-controller-config';
import { freePort } from '../../shared/testing/free-port';
import { readMigrationFiles } from '../store/migration-files';

// mesh-control as a person runs it: each verb its own process from bin/, on the embedded store
// (PGlite) and a broker started by `mesh-control broker`. The tests run in order and share the
// mesh the first one makes.

const root = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(root, 'bin', 'mesh-control');

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running mesh-control process, its output so far, and its end. */
interface Running {
  child: ChildProcess;
  stderr(): string;
  /** Resolves once its standard error has matched `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  finished: Promise<Finished>;
}

function start(args: string[]): Running {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    for (const waiter of waiters) waiter();
  });
  const finished = new Promise<Finished>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return {
    child,
    stderr: () => stderr,
    finished,
    waitFor: (pattern, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`mesh-control ${args[0]} did not print ${pattern} within ${timeoutMs} ms; it said:\n${stderr}`)), timeoutMs);
        const check = (): void => {
          if (!pattern.test(stderr)) return;
          clearTimeout(timer);
          resolve();
        };
        waiters.push(check);
        void finished.then(() => {
          clearTimeout(timer);
          if (pattern.test(stderr)) resolve();
          else reject(new Error(`mesh-control ${args[0]} ended before printing ${pattern}; it said:\n${stderr}`));
        });
        check();
      }),
  };
}

function run(args: string[]): Promise<Finished> {
  return start(args).finished;
}

async function modeOf(file: string): Promise<string> {
  return ((await fs.stat(file)).mode & 0o777).toString(8).padStart(4, '0');
}

describe('mesh-control from a checkout', () => {
  let parent: string;
  let dir: string;
  let port: number;
  let broker: Running | undefined;
  let serve: Running | undefined;

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-control-cli-'));
    dir = path.join(parent, 'the mesh');
    port = await freePort();
  });

  afterAll(async () => {
    for (const process of [serve, broker]) {
      if (process !== undefined && process.child.exitCode === null && process.child.signalCode === null) {
        process.child.kill('SIGTERM');
        await process.finished;
      }
    }
    await fs.rm(parent, { recursive: true, force: true });
  });

  test('init makes every file with its mode and an embedded store with every migration applied', async () => {
    const result = await run(['init', '--dir', dir, '--broker-url', `tls://127.0.0.1:${port}`, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const made = JSON.parse(result.stdout) as { files: Array<{ path: string; mode: string }>; migrations_applied: string[]; next: string[]; broker: { fingerprint: string } };

    const expected: Record<string, string> = {
      'keys/controller-signing.key': '0600',
      'keys/controller.nkey': '0600',
      'keys/operator.nkey': '0600',
      'broker/tls/broker.key': '0600',
      'broker/tls/broker.crt': '0644',
      'broker/nats-server.conf': '0644',
      'broker/auth.conf': '0600',
      'broker/users.json': '0600',
      store: '0700',
      'mesh.json': '0644',
    };
    expect(Object.fromEntries(made.files.map((file) => [path.relative(dir, file.path), file.mode]))).toEqual(expected);
    for (const [file, mode] of Object.entries(expected)) expect([file, await modeOf(path.join(dir, file))]).toEqual([file, mode]);
    expect(await modeOf(path.join(dir, 'keys'))).toBe('0700');

    const config = await loadControllerConfig(dir);
    expect(config.broker).toMatchObject({ url: `tls://127.0.0.1:${port}`, fingerprint: made.broker.fingerprint });
    expect(config.store).toEqual({ kind: 'pglite', dir: path.join(dir, 'store') });
    expect(await fs.readFile(path.join(dir, 'broker', 'nats-server.conf'), 'utf8')).toContain(`listen: "127.0.0.1:${port}"`);

    const migrations = (await readMigrationFiles()).map((file) => file.name);
    expect(made.migrations_applied).toEqual(migrations);
    // Read back by another process from the store itself, without migrating it.
    const check = spawn(process.execPath, ['-r', './scripts/register.cjs', '-e', `
      const { PgliteStore } = require('./actors/controller/store/pglite-store.ts');
      PgliteStore.open(${JSON.stringify(path.join(dir, 'store'))}).then(async (store) => {
        const rows = await store.query('SELECT name FROM schema_migrations ORDER BY version');
        process.stdout.write(JSON.stringify(rows.map((row) => row.name)));
        await store.close();
      });`], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let applied = '';
    check.stdout?.on('data', (chunk: Buffer) => (applied += chunk.toString('utf8')));
    await new Promise((resolve) => check.once('close', resolve));
    expect(JSON.parse(applied)).toEqual(migrations);

    expect(made.next).toEqual([`mesh-control broker --dir '${dir}'`, `mesh-control serve --dir '${dir}'`]);
  }, 90_000);

  test('init refuses a directory that already holds a mesh and changes nothing in it', async () => {
    const keyBefore = await fs.readFile(path.join(dir, 'keys', 'controller-signing.key'), 'utf8');
    const result = await run(['init', '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: this directory already holds a mesh/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await fs.readFile(path.join(dir, 'keys', 'controller-signing.key'), 'utf8')).toBe(keyBefore);
  });

  test('init refuses a directory with mesh files but no mesh.json, naming them, and writes nothing', async () => {
    const unfinished = path.join(parent, 'unfinished');
    await fs.mkdir(path.join(unfinished, 'keys'), { recursive: true });
    const result = await run(['init', '--dir', unfinished, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { condition: 'MeshDirectoryNotEmpty' } });
    expect(await fs.readdir(unfinished)).toEqual(['keys']);
  });

  test('init that fails part way removes what it made, so it can simply be run again', async () => {
    const failing = path.join(parent, 'no database');
    await fs.mkdir(failing);
    await fs.writeFile(path.join(failing, 'notes.txt'), 'kept');
    // Port 1 on 127.0.0.1: nothing listens there, so the store step fails after keys and broker files exist.
    const result = await run(['init', '--dir', failing, '--database', 'postgres://mesh@127.0.0.1:1/mesh']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: PostgreSQL did not accept a connection/);
    expect(await fs.readdir(failing)).toEqual(['notes.txt']);
  });

  test('with the broker up and no controller serving, a verb says how to start the controller', async () => {
    broker = start(['broker', '--dir', dir]);
    await broker.waitFor(/broker running/);
    expect(broker.stderr()).toContain(`nats-server -c '${path.join(dir, 'broker', 'nats-server.conf')}'`);
    const result = await run(['nodes', '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: no controller answered on the broker at tls://127.0.0.1:${port}\nnext:  start it with \`mesh-control serve --dir '${dir}'\`; if one was stopped or killed just now, a standby takes over within about 20 s (the lease lasts 15 s): try again then\n`);
  }, 30_000);

  test('serve answers nodes and token issue from the CLI in other processes; the token is printed once and decodes to this mesh', async () => {
    serve = start(['serve', '--dir', dir]);
    await serve.waitFor(/serving: epoch \d+/);

    const nodes = await run(['nodes', '--dir', dir, '--json']);
    expect(nodes.code).toBe(0);
    expect(JSON.parse(nodes.stdout)).toEqual({ nodes: [] });

    const issued = await run(['token', 'issue', '--new', '--ttl', '30m', '--dir', dir]);
    expect(issued.code).toBe(0);
    const [line, ...rest] = issued.stdout.split('\n');
    const token = decodeToken(line as string);
    const config = await loadControllerConfig(dir);
    expect(token).toMatchObject({ broker_url: config.broker.url, broker_fingerprint: config.broker.fingerprint, controller_public_key: config.controller.public_key });
    expect(rest.join('\n')).toContain('(30 min)');
    expect(rest.join('\n')).not.toContain(token.secret);
    await serve.waitFor(new RegExp(`token ${token.token_id} issued for a new machine`));
    expect(serve.stderr()).not.toContain(token.secret);
    expect(serve.stderr()).not.toContain(line as string);

    const refused = await run(['token', 'issue', '--node', 'nobody', '--dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: there is no node with this name: "nobody"\nnext: .*mesh-control token issue --new/);
  }, 60_000);

  test('SIGTERM stops serve cleanly, with status 0 and the store released', async () => {
    const running = serve as Running;
    running.child.kill('SIGTERM');
    const finished = await running.finished;
    expect([finished.code, finished.signal]).toEqual([0, null]);
    expect(finished.stderr).toMatch(/ stopped\n$/);
    await expect(fs.stat(path.join(dir, 'store.lock'))).rejects.toThrow(/ENOENT/);
  }, 30_000);

  test('SIGTERM stops the broker, and mesh-control broker with it', async () => {
    const running = broker as Running;
    running.child.kill('SIGTERM');
    const finished = await running.finished;
    expect([finished.code, finished.signal]).toEqual([0, null]);
    expect(finished.stdout).toContain('broker stopped (SIGTERM)');
  }, 30_000);
});
