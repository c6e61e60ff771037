import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Rotated } from '../actors/controller/provisions/rotate-provision';
import type { ProvisionsListing } from '../actors/controller/provisions/provisions.part';
import { MeshRig } from './mesh-rig';
import { jsonOf, succeeded, type CliResult } from './run-cli';
import { done, notYet, until } from './until';

// Provisions through real processes: a broker, a controller and three real hosts (pg provides
// app-database; a runs the consumers app and worker; b runs app). Each declared service is a
// real process the host starts with start-stop-daemon. A consumer is refused while nothing
// provides; then a rotation of one consumer's credential changes that one file, restarts that
// one service, and leaves every other consumer's file and process as they were. Last, every
// file the mesh wrote and everything the verbs printed is searched for the credentials.

const ACCOUNTS = 'root:x:0:0::/root:/bin/sh\napp:x:1201:1201::/srv/app:/bin/sh\nworker:x:1202:1202::/srv/worker:/bin/sh\npostgres:x:1203:1203::/srv/pg:/bin/sh\n';
const GROUPS = 'root:x:0:\napp:x:1201:\nworker:x:1202:\npostgres:x:1203:\n';
// A duration no other process on this machine is likely to sleep: how the test knows its own.
const SLEEP = '86391';

// Each module brings its service's definition (what a package would install), so the host
// makes the service itself rather than adopting one the machine had.
const definition = (service: string): object => ({ shape: 'file', path: `/etc/mesh-host/services/${service}.json`, content: { text: JSON.stringify({ exec: ['/bin/sleep', SLEEP] }) } });

const moduleJson = {
  db: {
    name: 'db',
    version: '1',
    provides: [{ provision: 'app-database', path: '/etc/db/accepted', owner: 'postgres', group: 'postgres', mode: '0640' }],
    resources: [definition('postgresql'), { shape: 'service', name: 'postgresql', state: 'running', enabled: true, restart_on: ['/etc/db/accepted'] }],
  },
  app: {
    name: 'app',
    version: '1',
    consumes: [{ provision: 'app-database', path: '/etc/app/db-credential', owner: 'app', group: 'app' }],
    resources: [definition('app'), { shape: 'service', name: 'app', state: 'running', enabled: true, restart_on: ['/etc/app/db-credential'] }],
  },
  worker: {
    name: 'worker',
    version: '1',
    consumes: [{ provision: 'app-database', path: '/etc/worker/db-credential', owner: 'worker', group: 'worker' }],
    resources: [definition('worker'), { shape: 'service', name: 'worker', state: 'running', enabled: true, restart_on: ['/etc/worker/db-credential'] }],
  },
};

describe('provisions through real processes', () => {
  let parent: string;
  let rig: MeshRig;
  const printed: CliResult[] = [];
  const control = async (args: readonly string[]): Promise<CliResult> => {
    const result = await rig.control(args);
    printed.push(result);
    return result;
  };
  const pidOf = (host: string, service: string): number | undefined => {
    try {
      const pid = Number(readFileSync(path.join(rig.hostRoot(host), 'run/mesh-host/services', `${service}.pid`), 'utf8').trim());
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(SLEEP) ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  const fileOf = (host: string, file: string): Promise<string | undefined> => fs.readFile(path.join(rig.hostRoot(host), file), 'utf8').catch(() => undefined);

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-provisions-'));
    rig = new MeshRig({ dir: parent, hosts: ['pg', 'a', 'b'] });
    await rig.start();
  }, 180_000);

  afterAll(async () => {
    // The services the hosts started are real processes outside the rig's: ended here.
    for (const [host, services] of [['pg', ['postgresql']], ['a', ['app', 'worker']], ['b', ['app']]] as const) {
      for (const service of services) {
        const pid = rig === undefined ? undefined : pidOf(host, service);
        if (pid !== undefined) process.kill(pid, 'SIGKILL');
      }
    }
    await rig?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  test('a rotation touches only the consumer named: its file changes and its service alone restarts', async () => {
    for (const host of rig.hosts) {
      const root = rig.hostRoot(host);
      await fs.writeFile(path.join(root, 'etc', 'passwd'), ACCOUNTS);
      await fs.writeFile(path.join(root, 'etc', 'group'), GROUPS);
      const issued = await rig.issueToken({ new: true });
      await rig.enrol(host, issued.token);
      await rig.host(host).waitFor(new RegExp(`linked to \\S+ as node ${host}`));
    }
    for (const [name, manifest] of Object.entries(moduleJson)) {
      const dir = path.join(parent, 'modules', name);
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'module.json'), JSON.stringify(manifest));
      succeeded(await control(['module', 'add', dir, '--json']));
    }

    // Nothing provides yet: refused, naming the provision and what would provide it.
    const refused = await control(['assign', 'a', 'app']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/consumes the provision app-database, and no node of the mesh provides it \(module db offers it\)/);
    expect(refused.stderr).toMatch(/next: +assign the provider first \(mesh-control assign NODE db\)/);
    const refusedJson = await control(['assign', 'a', 'app', '--json']);
    expect(JSON.parse(refusedJson.stdout)).toMatchObject({ error: { next: expect.stringMatching(/mesh-control assign NODE db/) } });

    succeeded(await control(['assign', 'pg', 'db', '--json']));
    succeeded(await control(['assign', 'a', 'app', 'worker', '--json']));
    succeeded(await control(['assign', 'b', 'app', '--json']));

    const started = await until('every credential written and every service running', async () => {
      const files = { aApp: await fileOf('a', 'etc/app/db-credential'), aWorker: await fileOf('a', 'etc/worker/db-credential'), bApp: await fileOf('b', 'etc/app/db-credential'), accepted: await fileOf('pg', 'etc/db/accepted') };
      const pids = { aApp: pidOf('a', 'app'), aWorker: pidOf('a', 'worker'), bApp: pidOf('b', 'app'), pg: pidOf('pg', 'postgresql') };
      const ready = Object.values(files).every((v) => v !== undefined) && Object.values(pids).every((v) => v !== undefined) && files.accepted?.split('\n').length === 4;
      return ready ? done({ files: files as Record<keyof typeof files, string>, pids: pids as Record<keyof typeof pids, number> }) : notYet(JSON.stringify({ files: Object.keys(files), pids }));
    }, { timeoutMs: 90_000 });
    const { files, pids } = started;
    expect(files.accepted).toBe(`a app ${files.aApp}\na worker ${files.aWorker}\nb app ${files.bApp}\n`);
    const written = await fs.stat(path.join(rig.hostRoot('a'), 'etc/app/db-credential'));
    expect([written.uid, written.gid, written.mode & 0o7777]).toEqual([1201, 1201, 0o600]);
    const untouched = {
      aWorker: await fs.stat(path.join(rig.hostRoot('a'), 'etc/worker/db-credential')),
      bApp: await fs.stat(path.join(rig.hostRoot('b'), 'etc/app/db-credential')),
    };

    const rotated = jsonOf<Rotated>(await control(['rotate', 'app-database', '--consumer', 'a', '--module', 'app', '--why', 'printed in a crash log', '--json']));
    expect(rotated.rotated).toEqual([expect.objectContaining({ node: 'a', module: 'app', version: 2 })]);
    expect(rotated.told.map((told) => told.node)).toEqual(['pg', 'a']);

    const after = await until('a new credential for app on a, and app restarted', async () => {
      const value = await fileOf('a', 'etc/app/db-credential');
      const pid = pidOf('a', 'app');
      const accepted = await fileOf('pg', 'etc/db/accepted');
      return value !== files.aApp && pid !== undefined && pid !== pids.aApp && accepted?.includes(`a app ${value}\n`) === true ? done({ value: value as string, pid }) : notYet(`pid ${pid}`);
    }, { timeoutMs: 60_000 });
    expect(after.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Every other consumer: the same bytes, the same file (not rewritten), the same process.
    expect(await fileOf('a', 'etc/worker/db-credential')).toBe(files.aWorker);
    expect(await fileOf('b', 'etc/app/db-credential')).toBe(files.bApp);
    const now = { aWorker: await fs.stat(path.join(rig.hostRoot('a'), 'etc/worker/db-credential')), bApp: await fs.stat(path.join(rig.hostRoot('b'), 'etc/app/db-credential')) };
    expect([now.aWorker.ino, now.aWorker.mtimeMs, now.bApp.ino, now.bApp.mtimeMs]).toEqual([untouched.aWorker.ino, untouched.aWorker.mtimeMs, untouched.bApp.ino, untouched.bApp.mtimeMs]);
    expect([pidOf('a', 'worker'), pidOf('b', 'app')]).toEqual([pids.aWorker, pids.bApp]);

    const acts = await control(['hand-acts', '--json']);
    expect(acts.stdout).toContain('printed in a crash log');
    const listing = jsonOf<ProvisionsListing>(await control(['provisions', '--json']));
    expect(listing.credentials.map((c) => `${c.node}/${c.module}:${c.version}`)).toEqual(['a/app:2', 'a/worker:1', 'b/app:1']);

    // The values: on the machines that hold them, and nowhere else.
    for (const args of [['status', '--json'], ['owned', '--json'], ['reconcile', '--json']]) for (const host of rig.hosts) printed.push(await rig.hostCli(host, args));
    printed.push(await control(['status', '--json']), await control(['nodes', '--json']), await control(['provisions']));
    const holders = new Set(['hosts/a/etc/app/db-credential', 'hosts/a/etc/worker/db-credential', 'hosts/b/etc/app/db-credential', 'hosts/pg/etc/db/accepted']);
    for (const value of [files.aApp, files.aWorker, files.bApp, after.value]) {
      expect((await filesHolding(parent, value)).filter((file) => !holders.has(file))).toEqual([]);
      expect(printed.filter((result) => `${result.stdout}${result.stderr}`.includes(value)).map((result) => result.command)).toEqual([]);
    }
  }, 300_000);
});

/** Every regular file under `dir` whose bytes hold `needle`, relative to `dir`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (!entry.isFile()) continue;
    if ((await fs.readFile(full)).includes(needle)) found.push(path.relative(dir, full));
  }
  return found;
}
