import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs, readdirSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { ProcessRunner, describeFailure, succeeded } from '../process/command-runner';

/** A PostgreSQL server started for one test suite. */
export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/DATABASE`: the database made at start. */
  readonly url: string;
  /** The TCP port on 127.0.0.1. */
  readonly port: number;
  /** The directory holding the server's unix socket (and its data directory). */
  readonly socketDir: string;
  /** The server's major version, e.g. 15. */
  readonly majorVersion: number;
  /** How long initdb, start and the first database took, in milliseconds. */
  readonly startupMs: number;
  /** Makes another empty database on the same server and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server at once and removes its files. Calling it again does nothing. */
  stop(): Promise<void>;
}

/** Where the server's programs are, and what to name the first database. */
export interface TestPostgresOptions {
  /** The directory holding initdb, pg_ctl and postgres. Found under /usr/lib/postgresql unless given. */
  binDir?: string;
  /** The first database's name. `mesh_test` unless given. */
  database?: string;
}

const runner = new ProcessRunner();

/**
 * Starts a real, private PostgreSQL for tests: initdb into a fresh temporary directory, trust
 * authentication, listening only on 127.0.0.1 at a free port and on a unix socket in that
 * directory, then one empty database. Durability is switched off (no fsync, no full-page writes,
 * initdb --no-sync) because nothing here must survive a crash; start-up takes about a second,
 * most of it initdb.
 *
 * PostgreSQL refuses to run as root, so as root the programs run as the `postgres` system user
 * (`runuser -u postgres --`) with the directory handed to that user; as anyone else they run as
 * the caller. Call `stop()` in afterAll; a server still running when the test process exits is
 * stopped then.
 */
export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const started = performance.now();
  const binDir = options.binDir ?? findBinDir();
  const database = options.database ?? 'mesh_test';
  const asRoot = process.getuid?.() === 0;
  const wrap = (argv: string[]): string[] => (asRoot ? ['runuser', '-u', 'postgres', '--', ...argv] : argv);

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-pg-'));
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const [stopProgram, ...stopArgs] = wrap([path.join(binDir, 'pg_ctl'), 'stop', '-D', dataDir, '-m', 'immediate', '-w']) as [string, ...string[]];
  let running = false;
  // The last resort when a suite ends without calling stop(): synchronous, as 'exit' requires.
  const stopNow = (): void => {
    if (!running) return;
    running = false;
    try {
      execFileSync(stopProgram, stopArgs, { stdio: 'ignore' });
    } catch {
      // Already gone: nothing to stop.
    }
  };
  process.on('exit', stopNow);

  try {
    if (asRoot) {
      const { uid, gid } = postgresUser();
      await fs.chown(dir, uid, gid);
    }
    await run(wrap([path.join(binDir, 'initdb'), '-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']));
    const majorVersion = Number.parseInt((await fs.readFile(path.join(dataDir, 'PG_VERSION'), 'utf8')).trim(), 10);

    let port = 0;
    for (let attempt = 1; ; attempt += 1) {
      port = await freePort();
      await fs.writeFile(path.join(dataDir, 'postgresql.auto.conf'), serverSettings(port, dir));
      if (asRoot) {
        const { uid, gid } = postgresUser();
        await fs.chown(path.join(dataDir, 'postgresql.auto.conf'), uid, gid);
      }
      const result = await runner.run(wrap([path.join(binDir, 'pg_ctl'), 'start', '-D', dataDir, '-l', logFile, '-w', '-t', '30']), { env: { LC_ALL: 'C' }, timeoutMs: 60_000 });
      if (succeeded(result)) break;
      // Another process may have taken the port between our probe and the server's bind.
      const log = await fs.readFile(logFile, 'utf8').catch(() => '');
      if (attempt >= 3 || !/could not bind|Address already in use/i.test(log)) {
        throw new Error(`${describeFailure(result)}\n${log.split('\n').slice(-10).join('\n')}`);
      }
    }
    running = true;

    const urlFor = (name: string): string => `postgres://postgres@127.0.0.1:${port}/${name}`;
    const createDatabase = async (name = `mesh_test_${Math.random().toString(36).slice(2, 10)}`): Promise<string> => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new RangeError(`a test database name is lowercase letters, digits and _: ${JSON.stringify(name)}`);
      const client = new Client({ connectionString: urlFor('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return urlFor(name);
    };
    const url = await createDatabase(database);

    let stopping: Promise<void> | undefined;
    return {
      url,
      port,
      socketDir: dir,
      majorVersion,
      startupMs: Math.round(performance.now() - started),
      createDatabase,
      stop: () => {
        stopping ??= (async () => {
          if (running) {
            running = false;
            await runner.run([stopProgram, ...stopArgs], { timeoutMs: 30_000 });
          }
          process.off('exit', stopNow);
          await fs.rm(dir, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  } catch (error) {
    stopNow();
    process.off('exit', stopNow);
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function serverSettings(port: number, socketDir: string): string {
  return [
    "listen_addresses = '127.0.0.1'",
    `port = ${port}`,
    `unix_socket_directories = '${socketDir}'`,
    // Nothing a test writes must survive a crash.
    'fsync = off',
    'synchronous_commit = off',
    'full_page_writes = off',
    'max_connections = 100',
    "log_min_messages = 'warning'",
    '',
  ].join('\n');
}

/** The newest PostgreSQL under /usr/lib/postgresql (Debian's layout), else the one on PATH. */
function findBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
      .filter((name) => /^\d+$/.test(name) && existsSync(path.join(root, name, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] !== undefined) return path.join(root, versions[0], 'bin');
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && existsSync(path.join(dir, 'initdb'))) return dir;
  }
  throw new Error('PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or on PATH): run `sh scripts/ensure-system.sh` as root, or install the postgresql package');
}

function postgresUser(): { uid: number; gid: number } {
  try {
    const uid = Number.parseInt(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }), 10);
    const gid = Number.parseInt(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }), 10);
    return { uid, gid };
  } catch {
    throw new Error('running as root, PostgreSQL must run as the `postgres` system user, and there is none: install the postgresql package (it creates the user) or run the tests as an ordinary user');
  }
}

async function run(argv: readonly string[]): Promise<void> {
  const result = await runner.run(argv, { env: { LC_ALL: 'C' }, timeoutMs: 60_000 });
  if (!succeeded(result)) throw new Error(describeFailure(result));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port was assigned'))));
    });
  });
}
