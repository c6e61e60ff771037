import { promises as fs } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RigProcess } from '../../../e2e/rig-process';
import type { DurationsListing } from '../durations/format-durations';
import type { HandActsListing } from '../hand-acts/format-hand-acts';
import type { ModuleAdded } from '../modules/add-module';
import type { PlanView } from './plan-view';
import { getPlan, type PlanRow } from './plans.repo';
import { RolloutMesh, textFile, type LauncherOptions } from './testing/rollout-mesh';

// Modules, assignment and staged rollouts on five machines, every part its own real process:
// PostgreSQL, the broker, `nox-mesh-host run` per machine (each a directory standing in for its
// root) and the controller with the plans part; verbs run as `mesh-control` processes. The tests
// run in order on one mesh. Machine a is the first by name, so it is every one-first plan's first
// machine; stopping its host is how it stays silent (its declaration waits on the broker for it).

const HOSTS = ['a', 'b', 'c', 'd', 'e'] as const;
const OTHERS = ['b', 'c', 'd', 'e'] as const;
const VERSION_FILE = 'srv/web/version';
const FIRST_REPORT_WAIT_MS = 12_000;
// A short lease in a bucket of its own, so a killed controller is followed within seconds.
const LAUNCHER: LauncherOptions = {
  first_report_wait_ms: FIRST_REPORT_WAIT_MS,
  check_every_ms: 200,
  lease_bucket: 'mesh-controller_lease_rollout',
  lease: { ttlMs: 4_000, renewEveryMs: 1_000, marginMs: 1_500, renewRetryMs: 500, contendEveryMs: 500 },
};

let mesh: RolloutMesh;
let serve: RigProcess;
const timings: Array<[string, number]> = [];

beforeAll(async () => {
  const started = Date.now();
  mesh = await RolloutMesh.start(HOSTS, async (m) => {
    serve = await m.startServe(LAUNCHER);
  });
  timings.push(['five machines enrolled', Date.now() - started]);
}, 180_000);

afterAll(async () => {
  await mesh?.stop();
  // A line per step, for the record of how long a rollout takes on real processes.
  process.stdout.write(`${timings.map(([what, ms]) => `${what}: ${ms} ms`).join('\n')}\n`);
}, 60_000);

let testStarted = 0;
beforeEach(() => {
  testStarted = Date.now();
});
afterEach(() => {
  timings.push([expect.getState().currentTestName ?? '?', Date.now() - testStarted]);
});

/** Registers a module version of `web` whose one file says the version. */
async function addWeb(version: string): Promise<ModuleAdded> {
  const folder = await mesh.writeModule('web', version, [textFile('/srv/web/version', `${version}\n`)]);
  return mesh.json<ModuleAdded>(['module', 'add', folder]);
}

/** How many durations of `kind` the controller heard in the last day. */
async function durationCount(kind: string): Promise<number> {
  const durations = await mesh.json<DurationsListing>(['durations', '--kind', kind]);
  return durations.kinds[0]?.count ?? 0;
}

async function plan(id: number): Promise<PlanRow> {
  const row = await getPlan(mesh.store, id);
  if (row === undefined) throw new Error(`no plan ${id}`);
  return row;
}

function planState(id: number, state: string, timeoutMs = 20_000): Promise<PlanRow> {
  return mesh.waitFor(`plan ${id} to be ${state}`, async () => {
    const row = await plan(id);
    return row.state === state ? row : undefined;
  }, timeoutMs);
}

/** The declarations sent with `module` at `version`, node by node. */
async function sendsCarrying(module: string, version: string): Promise<Array<{ node: string; generation: number; epoch: number; sent_at: Date }>> {
  return mesh.store.query(
    `SELECT m.node, m.generation, d.epoch, d.sent_at FROM module_sends m JOIN declarations d ON d.node = m.node AND d.generation = m.generation
     WHERE m.modules->>$1 = $2 ORDER BY m.node, m.generation`,
    [module, version],
  );
}

async function pins(module: string): Promise<Record<string, string>> {
  const rows = await mesh.store.query<{ node: string; version: string }>('SELECT node, version FROM module_assignments WHERE module = $1', [module]);
  return Object.fromEntries(rows.map((row) => [row.node, row.version]));
}

async function declarationCount(nodes: readonly string[]): Promise<number> {
  const [row] = await mesh.store.query<{ count: number }>('SELECT count(*)::int AS count FROM declarations WHERE node = ANY($1::text[])', [`{${nodes.join(',')}}`]);
  return row?.count ?? 0;
}

/** Stops machine a's host, runs `work`, and starts it again (even when `work` fails). */
async function withFirstSilent<T>(work: () => Promise<T>): Promise<T> {
  await mesh.rig.stopHost('a');
  try {
    return await work();
  } finally {
    await mesh.rig.startHost('a');
  }
}

describe('assignment', () => {
  test('a node whose adoption briefing has a failed line is refused at assign with the reason, and is eligible once it is resolved', async () => {
    // Machine e has its own /etc/motd, and the host cannot keep originals (a file is where the
    // originals directory would go), so adopting /etc/motd ends in a failed line.
    await fs.mkdir(path.join(mesh.rig.hostRoot('e'), 'etc'), { recursive: true });
    await fs.writeFile(path.join(mesh.rig.hostRoot('e'), 'etc', 'motd'), 'the machine\'s own motd\n');
    const blocker = path.join(mesh.rig.hostStateDir('e'), 'originals');
    await fs.writeFile(blocker, 'not a directory\n');
    const declaration = path.join(mesh.parent, 'declare-e.json');
    await fs.writeFile(declaration, JSON.stringify({ resources: [textFile('/etc/motd', 'managed by the mesh\n')] }));
    expect((await mesh.control(['node', 'declare', 'e', declaration])).code).toBe(0);
    await mesh.waitFor('node e to report a failed adoption line', async () => {
      const [row] = await mesh.store.query<{ briefing: { lines: Array<{ status: string }> } | null }>(
        'SELECT briefing FROM reports WHERE node = $1 ORDER BY epoch DESC, sequence DESC, report_sequence DESC LIMIT 1', ['e']);
      return row?.briefing?.lines.some((line) => line.status === 'failed') === true ? true : undefined;
    });

    const folder = await mesh.writeModule('extra', '1.0', [textFile('/srv/extra/readme', 'extra\n')]);
    await mesh.json(['module', 'add', folder]);
    const refused = await mesh.control(['assign', 'e', 'extra']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: node e is not eligible for assignment until its failed adoption line is resolved: file:\/etc\/motd: the original could not be kept/);
    expect(refused.stderr).toMatch(/next: {2}read its briefing on the machine \(nox-mesh-host briefing\)/);
    expect(await pins('extra')).toEqual({});
    // Still a node: it is listed, enrolled, and was sent its declaration.
    expect((await mesh.rig.nodes()).find((node) => node.name === 'e')?.lifecycle_state).toBe('enrolled');

    // Resolved: the originals can be kept now; the host's next pass adopts /etc/motd and reports.
    await fs.rm(blocker);
    await mesh.rig.stopHost('e');
    await mesh.rig.startHost('e');
    await mesh.waitFor('node e to report a briefing without a failed line', async () => {
      const [row] = await mesh.store.query<{ briefing: { lines: Array<{ status: string }> } | null }>(
        'SELECT briefing FROM reports WHERE node = $1 ORDER BY epoch DESC, sequence DESC, report_sequence DESC LIMIT 1', ['e']);
      return row?.briefing !== null && row?.briefing?.lines.every((line) => line.status !== 'failed') === true ? true : undefined;
    });
    const assigned = await mesh.control(['assign', 'e', 'extra']);
    expect(assigned.stdout).toMatch(/^node e: assigned extra 1\.0\nfull declaration sent as generation \d+/);
    await mesh.filesRead(['e'], 'srv/extra/readme', 'extra\n');
    expect((await mesh.control(['unassign', 'e', 'extra'])).stdout).toMatch(/^node e: unassigned extra 1\.0/);
    await mesh.waitFor('node e to remove what extra declared', async () => ((await mesh.fileOn('e', 'srv/extra/readme')) === undefined ? true : undefined));
  }, 60_000);

  test('a module from a folder, its file read from beside module.json, is put on all five machines', async () => {
    const folder = await mesh.writeModule('web', '1.0', [
      textFile('/srv/web/version', '1.0\n'),
      { shape: 'file', path: '/srv/web/index.html', content: { file: 'index.html' } },
    ]);
    await fs.writeFile(path.join(folder, 'index.html'), '<h1>served by the mesh</h1>\n');
    const added = await mesh.json<ModuleAdded>(['module', 'add', folder]);
    expect(added).toMatchObject({ module: 'web', version: '1.0', upgrade_policy: 'one-first', added: true, plan: null });
    for (const node of HOSTS) expect((await mesh.control(['assign', node, 'web'])).stdout).toMatch(new RegExp(`^node ${node}: assigned web 1\\.0\\nfull declaration sent`));
    await mesh.filesRead(HOSTS, VERSION_FILE, '1.0\n');
    await mesh.filesRead(HOSTS, 'srv/web/index.html', '<h1>served by the mesh</h1>\n');
    // The same revision again is nothing new.
    expect((await mesh.control(['module', 'add', folder])).stdout).toBe('module web 1.0 is registered already with this content; nothing changed\n');
  }, 30_000);

  test('two modules declaring one path, or one unit, on a node are refused at assign, naming both and the key', async () => {
    const site = await mesh.writeModule('site', '1.0', [textFile('/srv/web/index.html', 'another page\n')]);
    await mesh.json(['module', 'add', site]);
    const refused = await mesh.control(['assign', 'b', 'site']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: module web 1.0 and module site 1.0 both declare path:/srv/web/index.html on node b; nothing was assigned');
    const json = JSON.parse((await mesh.control(['assign', 'b', 'site', '--json'])).stdout) as { error: { condition: string; value: string } };
    expect(json.error).toMatchObject({ condition: 'ModuleCollision', value: 'path:/srv/web/index.html' });

    // Two modules assigned in one act are held to each other too.
    const service = { shape: 'service', name: 'nginx', state: 'running', enabled: true };
    await mesh.json(['module', 'add', await mesh.writeModule('proxy', '1.0', [service])]);
    await mesh.json(['module', 'add', await mesh.writeModule('frontend', '2.1', [service])]);
    const both = await mesh.control(['assign', 'c', 'proxy', 'frontend']);
    expect(both.stderr).toContain('error: module proxy 1.0 and module frontend 2.1 both declare unit:nginx on node c; nothing was assigned');
    expect(await pins('site')).toEqual({});
    expect(await pins('proxy')).toEqual({});
    expect(await mesh.fileOn('b', 'srv/web/index.html')).toBe('<h1>served by the mesh</h1>\n');
  }, 30_000);
});

describe('plans', () => {
  test('one-first: the first machine by name is sent alone, and the rest only after its report on the send says it applied', async () => {
    const [tiers, applies] = [await durationCount('plan-tier'), await durationCount('apply')];
    const before = await declarationCount(OTHERS);
    const added = await withFirstSilent(async () => {
      const opened = await addWeb('1.1');
      expect(opened.plan).toMatchObject({ first: 'a', targets: [...HOSTS] });
      await planState(opened.plan?.id ?? 0, 'awaitingFirst');
      // While machine a has not reported, nobody else is sent anything.
      await sleep(1_500);
      expect(await declarationCount(OTHERS)).toBe(before);
      expect(await pins('web')).toEqual({ a: '1.1', b: '1.0', c: '1.0', d: '1.0', e: '1.0' });
      const shown = await mesh.json<PlanView>(['plans', 'show', String(opened.plan?.id)]);
      expect(shown.nodes.map((node) => [node.node, node.status])).toEqual([['a', 'sent'], ['b', 'not sent'], ['c', 'not sent'], ['d', 'not sent'], ['e', 'not sent']]);
      return opened;
    });
    const id = added.plan?.id ?? 0;
    await planState(id, 'done');
    await mesh.filesRead(HOSTS, VERSION_FILE, '1.1\n');

    // Every other send went out after the controller took a's report on its send.
    const sends = await sendsCarrying('web', '1.1');
    const first = sends.find((send) => send.node === 'a');
    const [report] = await mesh.store.query<{ received_at: Date }>(
      'SELECT min(received_at) AS received_at FROM reports WHERE node = $1 AND generation >= $2', ['a', first?.generation ?? 0]);
    for (const node of OTHERS) {
      const send = sends.find((entry) => entry.node === node);
      expect([node, (send?.sent_at.getTime() ?? 0) >= (report?.received_at.getTime() ?? Infinity)]).toEqual([node, true]);
    }
    expect(sends.map((send) => send.node)).toEqual([...HOSTS]);

    // Both tiers were heard ending (the first machine's, then the rest's), and each machine's apply.
    expect(await durationCount('plan-tier')).toBe(tiers + 2);
    expect(await durationCount('apply')).toBe(applies + HOSTS.length);
  }, 60_000);

  test('a first machine that fails stops the plan, and the plan says which machine and why', async () => {
    // A directory where the module's file goes: the host refuses to write over it.
    await fs.rm(path.join(mesh.rig.hostRoot('a'), VERSION_FILE));
    await fs.mkdir(path.join(mesh.rig.hostRoot('a'), VERSION_FILE));
    const added = await addWeb('1.2');
    const id = added.plan?.id ?? 0;
    const stopped = await planState(id, 'stopped');
    expect(stopped.note).toMatch(/^the first machine, a, did not apply the revision: file:\/srv\/web\/version failed \(a directory is at \/srv\/web\/version/);
    const listed = await mesh.control(['plans']);
    expect(listed.stdout).toMatch(new RegExp(`^${id} +web +1\\.2 +one-first +stopped +1/5 sent +the first machine, a, did not apply the revision`, 'm'));
    const shown = await mesh.control(['plans', 'show', String(id)]);
    expect(shown.stdout).toContain('note: the first machine, a, did not apply the revision: file:/srv/web/version failed');
    expect(shown.stdout).toContain('still to send: b, c, d, e');
    await sleep(500);
    for (const node of OTHERS) expect([node, await mesh.fileOn(node, VERSION_FILE)]).toEqual([node, '1.1\n']);
  }, 30_000);

  test('retry sends the first machine again, and once it applied the rest follow', async () => {
    const [stopped] = await mesh.store.query<{ id: number }>("SELECT id FROM plans WHERE module = 'web' AND version = '1.2'");
    const id = stopped?.id ?? 0;
    await fs.rm(path.join(mesh.rig.hostRoot('a'), VERSION_FILE), { recursive: true });
    const retried = await mesh.control(['plans', 'retry', String(id)]);
    expect(retried.stdout).toBe(`plan ${id} retried: the first machine, a, is sent the revision again\n`);
    await planState(id, 'done');
    await mesh.filesRead(HOSTS, VERSION_FILE, '1.2\n');
    // a twice (the failed send, then the retry), every other machine once.
    expect((await sendsCarrying('web', '1.2')).map((send) => send.node)).toEqual(['a', 'a', 'b', 'c', 'd', 'e']);
    const again = await mesh.control(['plans', 'retry', String(id)]);
    expect(again.stderr).toMatch(/^error: plan \d+ has ended \(done\); it cannot be retried/);
  }, 30_000);

  test('a first machine that stays silent past the wait stops the plan, naming it', async () => {
    const started = Date.now();
    const id = await withFirstSilent(async () => {
      const added = await addWeb('1.3');
      const stopped = await planState(added.plan?.id ?? 0, 'stopped', FIRST_REPORT_WAIT_MS + 10_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(FIRST_REPORT_WAIT_MS);
      expect(stopped.note).toBe('the first machine, a, did not report on the send within the wait');
      for (const node of OTHERS) expect([node, await mesh.fileOn(node, VERSION_FILE)]).toEqual([node, '1.2\n']);
      return added.plan?.id ?? 0;
    });
    expect((await mesh.control(['plans', 'retry', String(id)])).stdout).toBe(`plan ${id} retried: the first machine, a, is sent the revision again\n`);
    await planState(id, 'done');
    await mesh.filesRead(HOSTS, VERSION_FILE, '1.3\n');
  }, 60_000);

  test('together sends every machine at once, waiting for no first machine', async () => {
    const tools = await mesh.writeModule('tools', '1.0', [textFile('/srv/tools/version', '1.0\n')], 'together');
    await mesh.json(['module', 'add', tools]);
    for (const node of HOSTS) await mesh.control(['assign', node, 'tools']);
    await mesh.filesRead(HOSTS, 'srv/tools/version', '1.0\n');
    await withFirstSilent(async () => {
      const added = await mesh.json<ModuleAdded>(['module', 'add', await mesh.writeModule('tools', '1.1', [textFile('/srv/tools/version', '1.1\n')], 'together')]);
      expect(added.plan?.first).toBeNull();
      const done = await planState(added.plan?.id ?? 0, 'done');
      expect(Object.keys(done.context.sent).sort()).toEqual([...HOSTS]);
      // Done with machine a not heard from at all.
      await mesh.filesRead(OTHERS, 'srv/tools/version', '1.1\n');
    });
    await mesh.filesRead(['a'], 'srv/tools/version', '1.1\n');
  }, 60_000);

  test('a newer revision supersedes the open plan, taking in the machines it had not sent', async () => {
    const { older, newer } = await withFirstSilent(async () => {
      const older = await addWeb('1.4');
      await planState(older.plan?.id ?? 0, 'awaitingFirst');
      const newer = await addWeb('1.5');
      expect(newer.superseded).toEqual([older.plan?.id]);
      expect(newer.plan).toMatchObject({ first: 'a', targets: [...HOSTS] });
      const superseded = await plan(older.plan?.id ?? 0);
      expect(superseded).toMatchObject({ state: 'superseded', superseded_by: newer.plan?.id, note: `superseded by plan ${newer.plan?.id}, which took in the nodes this one had not sent` });
      expect(Object.keys(superseded.context.sent)).toEqual(['a']);
      return { older, newer };
    });
    await planState(newer.plan?.id ?? 0, 'done');
    await mesh.filesRead(HOSTS, VERSION_FILE, '1.5\n');
    // The superseded revision reached only the machine it was sent to before the newer one came.
    expect((await sendsCarrying('web', '1.4')).map((send) => send.node)).toEqual(['a']);
    const closed = await mesh.control(['plans', 'close', String(older.plan?.id)]);
    expect(closed.stderr).toContain(`plan ${newer.plan?.id} holds its nodes now`);
  }, 60_000);

  test('close ends a plan where it stands; push NODE sends that node alone; push with no node says first it is the whole mesh', async () => {
    const added = await withFirstSilent(async () => {
      const opened = await addWeb('1.6');
      await planState(opened.plan?.id ?? 0, 'awaitingFirst');
      const closed = await mesh.control(['plans', 'close', String(opened.plan?.id)]);
      expect(closed.stdout).toBe(`plan ${opened.plan?.id} closed; never sent: b, c, d, e (mesh-control push NODE --why TEXT sends one)\n`);
      return opened;
    });
    expect((await plan(added.plan?.id ?? 0)).state).toBe('closed');
    // Machine a had been sent 1.6 before the close; it applies it on coming back, and nobody else gets it.
    await mesh.filesRead(['a'], VERSION_FILE, '1.6\n');
    await sleep(1_000);
    for (const node of OTHERS) expect([node, await mesh.fileOn(node, VERSION_FILE)]).toEqual([node, '1.5\n']);

    const others = await declarationCount(['a', 'c', 'd', 'e']);
    const pushed = await mesh.control(['push', 'b', '--why', 'b is behind']);
    expect(pushed.stdout).toMatch(/^node b: sent generation \d+: tools 1\.1, web 1\.6 \(was 1\.5\)\n$/);
    await mesh.filesRead(['b'], VERSION_FILE, '1.6\n');
    expect(await declarationCount(['a', 'c', 'd', 'e'])).toBe(others);
    for (const node of ['c', 'd', 'e']) expect([node, await mesh.fileOn(node, VERSION_FILE)]).toEqual([node, '1.5\n']);

    const both = await mesh.control(['push', 'c', '--behind', '--why', 'both at once']);
    expect(both.stderr).toBe('error: push takes a node or --behind, not both; nothing was sent: "c"\nnext:  run mesh-control push c --why TEXT to send that node only, or mesh-control push --behind --why TEXT for every node behind\n');

    const everywhere = await mesh.control(['push', '--why', 'the whole mesh']);
    expect(everywhere.stdout.split('\n')[0]).toBe('push to the whole mesh: every node (5), each moved to the newest revision of every module it runs; 5 sent');
    await mesh.filesRead(HOSTS, VERSION_FILE, '1.6\n');
  }, 60_000);

  test('record holds a revision until a push names the node; a node declare keeps the pinned revision and records it, so push --behind has nothing to send', async () => {
    await mesh.json(['module', 'add', await mesh.writeModule('cfg', '1', [textFile('/etc/app/cfg', 'one\n')], 'record')]);
    for (const node of HOSTS) await mesh.control(['assign', node, 'cfg']);
    await mesh.filesRead(HOSTS, 'etc/app/cfg', 'one\n');
    const added = await mesh.json<ModuleAdded>(['module', 'add', await mesh.writeModule('cfg', '2', [textFile('/etc/app/cfg', 'two\n')], 'record')]);
    const id = added.plan?.id ?? 0;
    expect((await plan(id)).state).toBe('held');
    await sleep(1_000);
    expect(await pins('cfg')).toEqual({ a: '1', b: '1', c: '1', d: '1', e: '1' });

    await mesh.control(['push', 'c', '--why', 'c is behind']);
    const kept = await mesh.json<HandActsListing>(['hand-acts']);
    expect(kept.acts.filter((act) => act.verb === 'push').map((act) => [act.subject, act.why])).toEqual([['c', 'c is behind'], [null, 'the whole mesh'], ['b', 'b is behind']]);
    await mesh.filesRead(['c'], 'etc/app/cfg', 'two\n');
    expect(Object.keys((await plan(id)).context.sent)).toEqual(['c']);
    // A revision held by its policy is not "behind": --behind does not roll it out.
    expect((await mesh.control(['push', '--behind', '--why', 'catch up'])).stdout).toBe('push --behind: no node is behind; nothing was sent\n');

    // `node declare` composes b's whole declaration, modules included at the revisions b is
    // pinned to, so b keeps cfg 1 (the held revision 2 is not rolled out), and records which
    // revisions that send carried, as every send with modules does: b is not behind.
    const empty = path.join(mesh.parent, 'declare-empty.json');
    await fs.writeFile(empty, JSON.stringify({ resources: [] }));
    await mesh.control(['node', 'declare', 'b', empty]);
    await sleep(1_000);
    expect(await mesh.fileOn('b', 'etc/app/cfg')).toBe('one\n');
    expect((await mesh.control(['push', '--behind', '--why', 'catch up'])).stdout).toBe('push --behind: no node is behind; nothing was sent\n');

    await mesh.control(['push', '--why', 'the whole mesh']);
    await mesh.filesRead(HOSTS, 'etc/app/cfg', 'two\n');
    expect(await planState(id, 'done')).toMatchObject({ note: 'every node was sent the revision by a push' });
  }, 60_000);
});

describe('a controller that stops mid-plan', () => {
  test('started again, it carries the plan on without sending anything twice', async () => {
    const added = await withFirstSilent(async () => {
      const opened = await addWeb('1.7');
      await planState(opened.plan?.id ?? 0, 'awaitingFirst');
      expect((await serve.stop()).code).toBe(0);
      serve = await mesh.startServe(LAUNCHER);
      return opened;
    });
    await planState(added.plan?.id ?? 0, 'done');
    await mesh.filesRead(HOSTS, VERSION_FILE, '1.7\n');
    expect((await sendsCarrying('web', '1.7')).map((send) => send.node)).toEqual([...HOSTS]);
  }, 60_000);

  test('killed with SIGKILL, the standby takes the lease and finishes the plan without sending anything twice', async () => {
    const standby = await mesh.startServe(LAUNCHER, /standing by/);
    const added = await withFirstSilent(async () => {
      const opened = await addWeb('1.8');
      await planState(opened.plan?.id ?? 0, 'awaitingFirst');
      serve.signal('SIGKILL');
      await standby.waitFor(/serving: epoch \d+/, { timeoutMs: 20_000 });
      return opened;
    });
    const row = await planState(added.plan?.id ?? 0, 'done');
    await mesh.filesRead(HOSTS, VERSION_FILE, '1.8\n');
    const sends = await sendsCarrying('web', '1.8');
    expect(sends.map((send) => send.node)).toEqual([...HOSTS]);
    // a was sent by the killed controller, the rest by the one that took over, under a higher epoch.
    const epochOf = (node: string): number => sends.find((send) => send.node === node)?.epoch ?? -1;
    for (const node of OTHERS) expect(epochOf(node)).toBeGreaterThan(epochOf('a'));
    expect(row.epoch).toBe(epochOf('b'));
    serve = standby;
  }, 60_000);
});
