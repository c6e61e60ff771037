import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MeshRig, REPO_DIR } from '../../../../e2e/mesh-rig';
import { RigProcess } from '../../../../e2e/rig-process';
import { succeeded, type CliResult } from '../../../../e2e/run-cli';
import { done, notYet, until } from '../../../../e2e/until';
import type { UpgradePolicy } from '../../../../schema/module';
import type { Resource } from '../../../../schema/resource';
import { startTestPostgres, type TestPostgres } from '../../../shared/testing/test-postgres';
import { openStore } from '../../store/open-store';
import type { SqlStore } from '../../store/sql-store';

/** Options of a controller started by serve-with-plans.ts (see there). */
export interface LauncherOptions {
  first_report_wait_ms?: number;
  check_every_ms?: number;
  lease_bucket?: string;
  lease?: { ttlMs: number; renewEveryMs: number; marginMs: number; renewRetryMs: number; contendEveryMs: number };
}

const LAUNCHER = path.join(__dirname, 'serve-with-plans.ts');
const RUN_TS = path.join(REPO_DIR, 'scripts', 'run-ts.cjs');

/**
 * A mesh of real processes for rollout tests: a private PostgreSQL as the store, the broker,
 * `nox-mesh-host run` on each machine (MeshRig), every machine enrolled and holding its full
 * declaration. The controller `mesh-control serve` the rig starts is stopped once the mesh is
 * up; the test serves its own (startServe: a process with the plans part, which it may kill, or
 * one in-process). The test reads the store through its own connection.
 */
export class RolloutMesh {
  readonly parent: string;
  readonly rig: MeshRig;
  readonly postgres: TestPostgres;
  /** The controller's store, read by the test. */
  store!: SqlStore;
  readonly #serves: RigProcess[] = [];
  #modules = 0;

  private constructor(parent: string, rig: MeshRig, postgres: TestPostgres) {
    this.parent = parent;
    this.rig = rig;
    this.postgres = postgres;
  }

  /** Raises the mesh with `hosts`, its own controller left to `serve` (called once the rig's has stopped). */
  static async start(hosts: readonly string[], serve: (mesh: RolloutMesh) => Promise<void>): Promise<RolloutMesh> {
    const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-rollout-'));
    const postgres = await startTestPostgres();
    const rig = new MeshRig({ dir: parent, hosts, database: postgres.url });
    const mesh = new RolloutMesh(parent, rig, postgres);
    try {
      await rig.start();
      await rig.serve?.stop();
      mesh.store = await openStore({ url: postgres.url });
      await serve(mesh);
      await mesh.enrolAll();
      return mesh;
    } catch (error) {
      await mesh.stop();
      throw error;
    }
  }

  /** Starts a controller with modules and plans as its own process, and waits until it serves or stands by. */
  async startServe(options: LauncherOptions = {}, waitFor: RegExp = /serving: epoch \d+/): Promise<RigProcess> {
    const index = this.#serves.length;
    const serve = new RigProcess({
      label: `serve ${index}`,
      argv: [process.execPath, RUN_TS, LAUNCHER, this.rig.meshDir, JSON.stringify(options)],
      cwd: REPO_DIR,
      logFile: path.join(this.rig.logDir, `serve-with-plans-${index}.log`),
    });
    this.#serves.push(serve);
    await serve.waitFor(waitFor, { timeoutMs: 30_000 });
    return serve;
  }

  /** Runs `mesh-control ARGS --dir MESH`. */
  control(args: readonly string[]): Promise<CliResult> {
    return this.rig.control(args);
  }

  /** Runs `mesh-control ARGS --json` and returns what it printed, failing the test when it failed. */
  async json<T>(args: readonly string[]): Promise<T> {
    const result = succeeded(await this.control([...args, '--json']));
    return JSON.parse(result.stdout) as T;
  }

  /** Writes a module folder (module.json) and returns its path. */
  async writeModule(name: string, version: string, resources: readonly unknown[], policy?: UpgradePolicy): Promise<string> {
    this.#modules += 1;
    const folder = path.join(this.parent, 'modules', `${name}-${version}-${this.#modules}`);
    await fs.mkdir(folder, { recursive: true });
    await fs.writeFile(path.join(folder, 'module.json'), JSON.stringify({ name, version, ...(policy === undefined ? {} : { upgrade_policy: policy }), resources }, null, 2));
    return folder;
  }

  /** A file on machine `host` (a path as the machine sees it), or undefined when there is none. */
  fileOn(host: string, file: string): Promise<string | undefined> {
    return fs.readFile(path.join(this.rig.hostRoot(host), file), 'utf8').catch(() => undefined);
  }

  /** Waits until `file` on each of `hosts` reads `text`. */
  async filesRead(hosts: readonly string[], file: string, text: string, timeoutMs = 20_000): Promise<void> {
    await until(`${file} to read ${JSON.stringify(text)} on ${hosts.join(', ')}`, async () => {
      const seen = await Promise.all(hosts.map(async (host) => [host, await this.fileOn(host, file)] as const));
      return seen.every(([, read]) => read === text) ? done(true) : notYet(seen.map(([host, read]) => `${host}: ${JSON.stringify(read)}`).join('\n'));
    }, { timeoutMs, intervalMs: 100 });
  }

  /** Waits until `look` yields a value (anything but undefined), failing with what it last saw. */
  waitFor<T>(what: string, look: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    return until(what, async () => {
      const value = await look();
      return value === undefined ? notYet('not yet') : done(value);
    }, { timeoutMs, intervalMs: 100 });
  }

  /** Enrols every machine with a token of its own and waits until each has applied its full declaration. */
  private async enrolAll(): Promise<void> {
    // One after another: each issue and each enrolment reloads the broker's user list, and a
    // connection made during a reload may be refused.
    for (const name of this.rig.hosts) {
      const issued = await this.rig.issueToken({ new: true });
      await this.rig.enrol(name, issued.token);
    }
    await this.waitFor('every machine to apply its full declaration', async () => {
      const rows = await this.store.query<{ name: string }>(
        `SELECT n.name FROM nodes n
         WHERE n.overlay_applied_generation IS NOT NULL
           AND n.report_generation >= (SELECT max(d.generation) FROM declarations d WHERE d.node = n.name AND d.kind = 'full')`,
      );
      return rows.length === this.rig.hosts.length ? true : undefined;
    }, 60_000);
  }

  /** Stops every controller it started, the rig, the store and PostgreSQL, and removes the files. */
  async stop(): Promise<void> {
    await Promise.all(this.rig.hosts.map((host) => this.rig.stopHost(host).catch(() => undefined)));
    await Promise.all(this.#serves.map((serve) => serve.stop()));
    await this.rig.stop();
    await this.store?.close();
    await this.postgres.stop();
    if (process.env.MESH_E2E_KEEP === undefined) await fs.rm(this.parent, { recursive: true, force: true });
  }
}

/** A file resource with text content, as module.json writes one. */
export function textFile(file: string, text: string): Resource {
  return { shape: 'file', path: file, content: { text }, mode: '0644', owner: 'root', group: 'root' };
}
