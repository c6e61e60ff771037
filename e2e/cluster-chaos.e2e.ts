import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { seededRandom } from '../actors/shared/testing/seeded-random';
import { ClusterRig } from './cluster-rig';
import { succeeded } from './run-cli';
import { done, notYet, until } from './until';

// The mesh on a three-server NATS cluster and two controllers on one PostgreSQL, all real
// processes on loopback, while a rollout runs across the fleet and, in an order a seed chooses,
// each nats-server is killed -9 and started again, the acting controller is killed -9 (and
// started again, as its service manager would), and the store's connection is cut for a few
// seconds. Heavy: run by `npm run e2e:cluster`, not by `npm test`.
//
// MESH_CHAOS_SEED picks the order and the pauses (default 1); MESH_CHAOS_HOSTS the fleet's size
// (default 20 real `nox-mesh-host run` processes).

const SEED = Number(process.env.MESH_CHAOS_SEED ?? 1);
const HOST_COUNT = Number(process.env.MESH_CHAOS_HOSTS ?? 20);
const HOSTS = Array.from({ length: HOST_COUNT }, (_, index) => `m${String(index + 1).padStart(2, '0')}`);
const FILE = '/etc/chaos/web.conf';

type Fault = { kind: 'server'; name: string } | { kind: 'controller' } | { kind: 'store' };

function faultOrder(random: () => number): Fault[] {
  const faults: Fault[] = [{ kind: 'server', name: 's1' }, { kind: 'server', name: 's2' }, { kind: 'server', name: 's3' }, { kind: 'controller' }, { kind: 'store' }];
  for (let index = faults.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [faults[index], faults[other]] = [faults[other] as Fault, faults[index] as Fault];
  }
  return faults;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The invariants the test holds the mesh to, by the names the chaos bench reports a failure under. */
type Invariant = 'setup' | 'converged' | 'plan finished once' | 'epoch order' | 'no report missing' | 'nothing by hand' | 'every node enrolled';

/**
 * Runs one check and, when it fails, says which invariant broke in the first line of the error,
 * so the chaos bench (bench/cluster/chaos-seeds.ts) can report it without reading stack traces.
 */
async function invariant<T>(name: Invariant, check: () => Promise<T> | T): Promise<T> {
  try {
    return await check();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`invariant "${name}" broke: ${message}`, { cause: error });
  }
}

describe(`a rollout across ${HOST_COUNT} hosts on a cluster while its parts fail (seed ${SEED})`, () => {
  let rig: ClusterRig;
  let dir: string;
  const said: string[] = [];
  const say = (line: string) => {
    said.push(`${new Date().toISOString()} ${line}`);
    process.stderr.write(`chaos: ${line}\n`);
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-cluster-chaos-'));
    rig = new ClusterRig({ dir, hosts: HOSTS, say });
    await invariant('setup', () => rig.start());
    say('enrolling every host with its own token');
    for (let index = 0; index < HOSTS.length; index += 2) {
      await Promise.all(HOSTS.slice(index, index + 2).map(async (name) => {
        const token = await rig.issueToken();
        // As a person would: an answer that says it is retryable is asked again, with the same token.
        await invariant('setup', () => until(`${name} to enrol`, async () => {
          const answer = await rig.hostCli(name, ['enrol', '--token', token.token, '--json']);
          if (answer.code === 0) return done(true);
          if (!answer.stdout.includes('"retryable":true')) succeeded(answer);
          return notYet(answer.stdout);
        }, { timeoutMs: 120_000, intervalMs: 2000 }));
      }));
    }
  }, 900_000);

  afterAll(async () => {
    await rig?.stop();
    if (process.env.MESH_CHAOS_KEEP === '1') process.stderr.write(`chaos: files kept in ${dir}\n`);
    else await fs.rm(dir, { recursive: true, force: true });
  }, 120_000);

  async function writeModule(version: string): Promise<string> {
    const moduleDir = path.join(dir, `web-${version}`);
    await fs.mkdir(moduleDir, { recursive: true });
    await fs.writeFile(path.join(moduleDir, 'module.json'), JSON.stringify({
      name: 'web', version, upgrade_policy: 'one-first',
      resources: [
        { shape: 'directory', path: '/etc/chaos', mode: '0755' },
        { shape: 'file', path: FILE, content: { text: `web ${version}\n` }, mode: '0644' },
      ],
    }));
    return moduleDir;
  }

  async function everyHostHas(text: string, timeoutMs: number): Promise<void> {
    await until(`every host to hold "${text.trim()}"`, async () => {
      const behind: string[] = [];
      for (const name of HOSTS) {
        const content = await fs.readFile(path.join(rig.hostRoot(name), FILE), 'utf8').catch(() => '');
        if (content !== text) behind.push(name);
      }
      return behind.length === 0 ? done(true) : notYet(`behind: ${behind.join(', ')}`);
    }, { timeoutMs, intervalMs: 1000 });
  }

  it('converges every host on the final declarations, loses no report, keeps epoch order and finishes the plan once', async () => {
    say('registering web 1.0.0 and putting it on every node');
    succeeded(await rig.control(['module', 'add', await writeModule('1.0.0')]));
    for (let index = 0; index < HOSTS.length; index += 4) {
      await Promise.all(HOSTS.slice(index, index + 4).map(async (name) => succeeded(await rig.control(['assign', name, 'web']))));
    }
    await invariant('setup', () => everyHostHas('web 1.0.0\n', 300_000));

    const random = seededRandom(SEED);
    const order = faultOrder(random);
    // A new revision before each fault, so a plan is under way (or superseded by the next) as
    // each part fails; the last one must finish.
    const versions = order.map((_, index) => `${index + 2}.0.0`);
    const final = versions[versions.length - 1] as string;
    say(`faults in the order ${order.map((fault) => (fault.kind === 'server' ? fault.name : fault.kind)).join(', ')}, each after a new revision of web`);
    for (const [index, fault] of order.entries()) {
      const version = versions[index] as string;
      const moduleDir = await writeModule(version);
      await until(`web ${version} to be registered`, async () => {
        const answer = await rig.control(['module', 'add', moduleDir, '--json']);
        if (answer.code === 0) return done(true);
        // An add whose answer was lost may have been made: asked again, it is refused as not newer.
        if ((answer.stdout + answer.stderr).includes(`is not newer than the registered ${version};`)) return done(true);
        if (!answer.stdout.includes('"retryable":true')) succeeded(answer);
        return notYet(answer.stdout);
      }, { timeoutMs: 120_000, intervalMs: 1000 });
      say(`web ${version} registered: a one-first plan`);
      await sleep(Math.floor(random() * 1500));
      if (fault.kind === 'server') {
        say(`kill -9 nats-server ${fault.name}`);
        await rig.killServer(fault.name);
        await sleep(2000 + Math.floor(random() * 3000));
        say(`starting ${fault.name} again`);
        await rig.startServer(fault.name);
      } else if (fault.kind === 'controller') {
        const acting = await rig.actingController();
        say(`kill -9 the acting controller (serve ${acting})`);
        await rig.killController(acting);
        await sleep(3000);
        say(`starting serve ${acting} again, as its service manager would`);
        await rig.startController(acting);
      } else {
        const ms = 3000 + Math.floor(random() * 2000);
        say(`cutting the store's connections for ${ms} ms`);
        await rig.cutStore(ms);
      }
    }
    say('faults over; waiting for the rollout to finish');
    const faultsOver = Date.now();
    await invariant('converged', () => everyHostHas(`web ${final}\n`, 600_000));

    const store = new Client({ connectionString: rig.postgres!.url });
    await store.connect();
    try {
      // The plan finished once: one plan for the last revision, done; every earlier one done or
      // superseded, none left open; and nobody had to act by hand.
      await invariant('plan finished once', async () => {
        await until(`the plan for web ${final} to be done`, async () => {
          const plans = (await store.query<{ id: number; state: string }>("SELECT id, state FROM plans WHERE module = 'web' AND version = $1", [final])).rows;
          return plans.length === 1 && plans[0]!.state === 'done' ? done(true) : notYet(JSON.stringify(plans));
        }, { timeoutMs: 120_000, intervalMs: 1000 });
        const plans = (await store.query<{ version: string; state: string }>("SELECT version, state FROM plans WHERE module = 'web' ORDER BY id")).rows;
        say(`plans: ${plans.map((plan) => `${plan.version} ${plan.state}`).join(', ')}`);
        expect(plans.filter((plan) => plan.version === final)).toHaveLength(1);
        expect(plans.filter((plan) => !['done', 'superseded'].includes(plan.state))).toEqual([]);
      });

      for (const name of HOSTS) {
        // Declarations were taken in epoch order, each generation newer than the last.
        await invariant('epoch order', () => {
          const taken = [...rig.host(name).output().matchAll(/took declaration generation (\d+) \([a-z]+, epoch (\d+),/g)].map((match) => ({ generation: Number(match[1]), epoch: Number(match[2]) }));
          expect(taken.length).toBeGreaterThan(0);
          for (let index = 1; index < taken.length; index += 1) {
            expect(taken[index]!.epoch).toBeGreaterThanOrEqual(taken[index - 1]!.epoch);
            expect(taken[index]!.generation).toBeGreaterThan(taken[index - 1]!.generation);
          }
        });
        // The report of what the host holds last reached the store: the controller knows it applied.
        // A report lost with a controller killed mid-write is asked for again by sending the
        // declaration again at a later heartbeat (resend-on-lost-report.ts), so what the host
        // holds is read at every look; heartbeats come every 30 s, and only the acting
        // controller takes them.
        await invariant('no report missing', () => until(`${name}'s report of what it holds in the store`, async () => {
          const state = JSON.parse(await fs.readFile(path.join(rig.hostRoot(name), 'var', 'lib', 'mesh-host', 'state.json'), 'utf8')) as { last_declaration: { digest: string; applied_generation: number } };
          const rows = (await store.query('SELECT 1 FROM reports WHERE node = $1 AND declaration_digest = $2 AND generation = $3', [name, state.last_declaration.digest, state.last_declaration.applied_generation])).rows;
          return rows.length > 0 ? done(true) : notYet(`generation ${state.last_declaration.applied_generation}: not there`);
        }, { timeoutMs: 180_000, intervalMs: 1000 }));
      }
      await invariant('nothing by hand', async () => {
        const acts = (await store.query<{ n: number }>('SELECT count(*)::int AS n FROM hand_acts')).rows[0]!.n;
        expect(acts).toBe(0);
      });
    } finally {
      await store.end();
    }
    // Asked of whichever controller acts by now (a standby takes over within the lease's 15 s).
    await invariant('every node enrolled', async () => {
      const enrolled = await until('a controller to list the nodes', async () => {
        const answer = await rig.control(['nodes', '--json']);
        if (answer.code !== 0) return notYet(answer.stderr);
        return done((JSON.parse(answer.stdout) as { nodes: Array<{ name: string; lifecycle_state: string }> }).nodes.filter((node) => node.lifecycle_state === 'enrolled').map((node) => node.name).sort());
      }, { timeoutMs: 60_000, intervalMs: 1000 });
      expect(enrolled).toEqual([...HOSTS].sort());
    });
    say(`converged ${Math.round((Date.now() - faultsOver) / 1000)} s after the last fault`);
  }, 1_500_000);
});

