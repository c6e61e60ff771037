import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NodeListing } from '../actors/controller/nodes/list-nodes';
import { startTestPostgres, type TestPostgres } from '../actors/shared/testing/test-postgres';
import type { ControllerStatus } from '../schema/controller-status';
import { MeshRig } from './mesh-rig';
import { jsonOf, succeeded } from './run-cli';
import { done, notYet, until } from './until';

// A machine going away and coming back, every part its own real process: `mesh-control serve`
// over a real broker and PostgreSQL, and `nox-mesh-host run` on one machine, enrolled with a
// token, stopped as its service manager stops it, and started again. Periods are short (the
// host beats every 300 ms, the controller's resident bound is 3 s) through the two processes'
// timing variables, which they read at start.

const TIMINGS: Record<string, string> = {
  MESH_HOST_TIMINGS: 'heartbeat=300ms',
  MESH_CONTROLLER_TIMINGS: 'presence=200ms heartbeat_resident=1s',
};

describe('a machine away and back, as the controller sees it', () => {
  let parent: string;
  let postgres: TestPostgres | undefined;
  let rig: MeshRig;

  const nodeUntil = (what: string, holds: (node: NodeListing) => boolean): Promise<NodeListing> =>
    until(`mesh-control nodes to show a ${what}`, async () => {
      const node = (await rig.nodes()).find((listed) => listed.name === 'a');
      return node !== undefined && holds(node) ? done(node) : notYet(JSON.stringify(node));
    }, { intervalMs: 200, timeoutMs: 60_000 });

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-away-'));
    postgres = await startTestPostgres();
    rig = new MeshRig({ dir: parent, hosts: ['a'], database: postgres.url, env: TIMINGS });
    await rig.start();
  }, 90_000);

  afterAll(async () => {
    await rig?.stop();
    await postgres?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  test('an enrolled host heard from is enrolled, with its kind from its heartbeats', async () => {
    const issued = await rig.issueToken({ new: true });
    await rig.enrol('a', issued.token);
    const node = await nodeUntil('enrolled and heard from', (listed) => listed.lifecycle_state === 'enrolled' && listed.last_seen_at !== null);
    expect(node).toMatchObject({ host_kind: 'resident', silence_bound_seconds: 3, disconnected_since: null, last_away: null });
  }, 60_000);

  test('stopped, it is shown disconnected since it was last heard, and status names it without a problem', async () => {
    await rig.stopHost('a');
    const node = await nodeUntil('disconnected', (listed) => listed.lifecycle_state === 'disconnected');
    expect(node.disconnected_since).toBe(node.last_seen_at);
    const text = succeeded(await rig.control(['nodes'])).stdout;
    // The address may carry how the overlay reaches it, as `10.77.0.1 (no-wireguard)`.
    expect(text).toMatch(/\na +disconnected +resident +\S+(?: \([\w-]+\))? +\S+ +last seen \d+ s ago \(bound 3 s\) +\d+ s, since \S+/);

    const status = jsonOf<ControllerStatus>(await rig.control(['status', '--json']));
    if (!status.nodes.disconnected.some((listed) => listed.node === 'a')) {
      // Composed before the marking; the next composition (news, or its minute) names it.
      await until('status to name a as disconnected', async () => {
        const again = jsonOf<ControllerStatus>(await rig.control(['status', '--json']));
        return again.nodes.disconnected.some((listed) => listed.node === 'a') ? done(again) : notYet(JSON.stringify(again.nodes));
      }, { intervalMs: 500, timeoutMs: 90_000 });
    }
    const latest = jsonOf<ControllerStatus>(await rig.control(['status', '--json']));
    expect(latest.problems.filter((problem) => problem.subject === 'a')).toEqual([]);
  }, 150_000);

  test('started again, its first heartbeat makes it enrolled, keeping how long it was away, as the controller and the host each say', async () => {
    const away = (await rig.nodes()).find((listed) => listed.name === 'a');
    await rig.startHost('a');
    const node = await nodeUntil('enrolled again', (listed) => listed.lifecycle_state === 'enrolled' && listed.last_away !== null);
    expect(node.disconnected_since).toBeNull();
    expect(node.last_away?.seconds).toBe(Math.round((Date.parse(node.last_away?.back_at ?? '') - Date.parse(away?.disconnected_since ?? '')) / 1000));
    expect(node.host_away_seconds).toBeGreaterThan(0);
    expect(rig.serve?.output()).toMatch(/presence: node a is enrolled again after \d+ s away/);
  }, 90_000);
});
