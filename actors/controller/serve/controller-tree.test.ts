import * as z from 'zod';
import type { ControlCall } from '../../../schema/control-call';
import type { ControllerStatus } from '../../../schema/controller-status';
import type { Report } from '../../../schema/report';
import { reportSubject } from '../../shared/bus/subjects';
import { generateNodeIdentity } from '../../shared/crypto';
import type { SupervisionTreeNode } from '../../shared/supervisor/describe-tree';
import { SupervisorEscalated } from '../../shared/supervisor/supervisor-escalated';
import { CALLS_BUCKET, openCallsBucket } from '../calls/calls-bucket';
import { callController } from '../control/call-controller';
import { ControllerRefused } from '../control/control-errors';
import { upsertNode } from '../store/nodes.repo';
import { serveController, type ServeControllerOptions, type ServingController } from './serve-controller';
import { eventually } from './testing/eventually';
import { useTestMesh } from './testing/use-test-mesh';

// The serving controller as a supervision tree, over a real broker and a real PostgreSQL, called
// the way the CLI calls it: its children, a child killed and restarted while the controller
// keeps serving, a child failing past its budget, status, and calls kept across a restart.

const suite = useTestMesh();

const FAST: ServeControllerOptions = {
  supervision: { maxRestarts: 1, windowMs: 10_000, backoff: { baseMs: 50, maxMs: 50 } },
  answerWithinMs: 500,
};

// Every controller a test below starts, stopped after it even when it fails or times out: one
// left holding the lease would have the next test's controller stand by, and jest not exit.
const started: ServingController[] = [];
async function serve(options: ServeControllerOptions = FAST): Promise<ServingController> {
  const serving = await serveController(suite.mesh.dir, options);
  started.push(serving);
  return serving;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((serving) => serving.stop().catch(() => undefined)));
}, 30_000);

function childOf(tree: SupervisionTreeNode, id: string): SupervisionTreeNode {
  const child = tree.children.find((node) => node.id === id);
  if (child === undefined) throw new Error(`the tree has no child ${id}: ${JSON.stringify(tree)}`);
  return child;
}

async function enrolledNode(serving: ServingController, name: string): Promise<void> {
  const identity = generateNodeIdentity();
  await upsertNode(serving.ctx.store, { name, lifecycle_state: 'enrolled', public_key: identity.public_key, nkey: identity.nkey_public }, serving.ctx.now());
}

function report(node: string, order: { epoch: number; sequence: number; report_sequence: number }): Report {
  return {
    node,
    ...order,
    declaration_digest: null,
    generation: 0,
    results: [],
    owned: { resources: [] },
    version_running: '0.1.0',
    seconds_since_linked: null,
    sent_at: new Date().toISOString(),
  };
}

describe('the serving controller\'s tree', () => {
  let serving: ServingController;
  const log: string[] = [];

  beforeAll(async () => {
    serving = await serveController(suite.mesh.dir, { ...FAST, log: (line) => log.push(line) });
  }, 30_000);

  afterAll(async () => {
    await serving?.stop();
  });

  test('runs every part as a child, each shown with its state by `mesh-control tree`', async () => {
    const answer = await callController(suite.mesh.dir, 'tree', {});
    const tree = answer.result as SupervisionTreeNode;
    expect(tree).toMatchObject({ id: 'controller', state: 'supervising' });
    expect(tree.children.map((child) => child.id)).toEqual(['bus', 'store', 'lease', 'broker', 'reports', 'heartbeats', 'enrolment', 'declarations', 'plans', 'records', 'status', 'doctor', 'watchdog', 'control']);
    expect(tree.children.every((child) => child.state === 'running')).toBe(true);
    expect(childOf(tree, 'lease').child_state).toMatch(/^holding\./);
    expect(childOf(tree, 'control').child_state).toBe('running');
    expect(answer.text.split('\n')[0]).toBe('controller  supervising');
    expect(answer.text).toMatch(/├─ lease +running +holding\.(waiting|renewing)\n/);
    expect(answer.text).toMatch(/└─ control +running +running$/);
    expect(log.join('\n')).toMatch(/serving: epoch \d+, store postgres/);
  });

  test('a killed child is restarted after its backoff, and the controller keeps serving through it', async () => {
    await enrolledNode(serving, 'kitchen');
    expect(serving.kill('reports', 'killed by the test')).toBe(true);
    const reports = (): SupervisionTreeNode => childOf(serving.tree(), 'reports');
    await eventually('the report receiver is restarted', () => reports().state === 'running' && reports().child_state === 'running' && reports().restarts === 1, { seen: () => JSON.stringify(reports()) });
    expect(reports().last_error).toBe('killed by the test');

    // The restarted receiver takes reports, and the rest of the controller answered all along.
    serving.ctx.nc.publish(reportSubject('kitchen'), JSON.stringify(report('kitchen', { epoch: 1, sequence: 1, report_sequence: 1 })));
    await eventually('the report is kept', async () => (await serving.ctx.store.query('SELECT 1 FROM reports WHERE node = $1', ['kitchen'])).length === 1);
    // Status answers its last composition, made after news (the restart among it): wait for the one after the restart.
    const restarted = { kind: 'supervision', subject: 'reports', detail: 'running again; 1 restart lately; last error: killed by the test' };
    await eventually('status to show the restart', async () => ((await callController(suite.mesh.dir, 'status', {})).result as ControllerStatus).problems.some((problem) => JSON.stringify(problem) === JSON.stringify(restarted)));
    const status = (await callController(suite.mesh.dir, 'status', {})).result as ControllerStatus;
    expect(status.problems).toContainEqual(restarted);
  });

  test('refuses and counts a report older than the node\'s latest, and status shows the count', async () => {
    await enrolledNode(serving, 'shelf');
    serving.ctx.nc.publish(reportSubject('shelf'), JSON.stringify(report('shelf', { epoch: 2, sequence: 5, report_sequence: 9 })));
    await eventually('the newer report is kept', async () => (await serving.ctx.store.query('SELECT 1 FROM reports WHERE node = $1', ['shelf'])).length === 1);
    serving.ctx.nc.publish(reportSubject('shelf'), JSON.stringify(report('shelf', { epoch: 2, sequence: 4, report_sequence: 10 })));
    serving.ctx.nc.publish(reportSubject('shelf'), JSON.stringify(report('shelf', { epoch: 1, sequence: 9, report_sequence: 11 })));
    const shelfRefusals = (status: ControllerStatus) => status.refused_reports.by_node.find((entry) => entry.node === 'shelf');
    await eventually('status counts both refusals', () => shelfRefusals(serving.status.latest() as ControllerStatus)?.count === 2, { seen: () => JSON.stringify(serving.status.latest()?.refused_reports) });

    const answer = await callController(suite.mesh.dir, 'status', {});
    const status = answer.result as ControllerStatus;
    expect(shelfRefusals(status)).toMatchObject({ reason: 'older', count: 2 });
    expect(status.refused_reports.by_reason.older).toBeGreaterThanOrEqual(2);
    expect(status.lease).toMatchObject({ state: 'acting', epoch: serving.lease.epoch(), epoch_floor: serving.lease.epoch() });
    expect(status.lease.holder).toMatch(/:\d+$/);
    expect(status.nodes.by_state.enrolled).toBeGreaterThanOrEqual(2);
    // Status leads with the open conditions (or "all well"), then says when it was composed.
    expect(answer.text).toMatch(/^(all well|no condition open|NOT WELL)[^\n]*(\n {2}[^\n]*)*\ncomposed \S+ \((just now|\d+ s ago)\) in \d+ ms by /);
    expect(answer.text).toMatch(/\nrefused reports: \d+ \(\d+ older\): .*shelf older 2/);
  });

  test('names a node whose full declaration is held among the problems, once asked to compose again', async () => {
    await enrolledNode(serving, 'cellar');
    await serving.ctx.store.query("UPDATE nodes SET full_held = 'the overlay (generation 1) did not apply: file:/etc/wireguard/mesh0.conf' WHERE name = 'cellar'");
    const before = serving.status.latest()?.composed_at;
    serving.status.want('a test');
    await eventually('status is composed again', () => serving.status.latest()?.composed_at !== before || serving.status.latest()?.problems.some((problem) => problem.subject === 'cellar') === true);
    const answer = await callController(suite.mesh.dir, 'status', {});
    expect((answer.result as ControllerStatus).problems).toContainEqual({ kind: 'node', subject: 'cellar', detail: 'its full declaration is held: the overlay (generation 1) did not apply: file:/etc/wireguard/mesh0.conf' });
    expect(answer.text).toContain('  - node cellar: its full declaration is held: the overlay (generation 1)');
  });

  test('answers an acting verb that outlasts the answer window as running with its call id, and `calls` says how it ended', async () => {
    // A slow call also waits for the test to have seen it running, however loaded the machine.
    let seenRunning: () => void = () => undefined;
    const seen = new Promise<void>((resolve) => (seenRunning = resolve));
    serving.verbs.scoped('test').register('test.slow', z.strictObject({ pause: z.int() }), async (_ctx, args) => {
      await Promise.all([new Promise((resolve) => setTimeout(resolve, args.pause)), args.pause > 1 ? seen : undefined]);
      return { result: { slept: args.pause }, text: `slept ${args.pause} ms` };
    });
    const quick = await callController(suite.mesh.dir, 'test.slow', { pause: 1 });
    expect(quick).toEqual({ result: { slept: 1 }, text: 'slept 1 ms' });

    const slow = await callController(suite.mesh.dir, 'test.slow', { pause: 1_200 });
    const running = (slow.result as { call: { id: string; state: string; verb: string } }).call;
    expect(running).toMatchObject({ state: 'running', verb: 'test.slow' });
    expect(slow.text).toContain(`mesh-control calls ${running.id}`);
    expect(((await callController(suite.mesh.dir, 'calls', { id: running.id })).result as ControlCall).state).toBe('running');
    seenRunning();

    await eventually('the slow call ends', async () => ((await callController(suite.mesh.dir, 'calls', { id: running.id })).result as ControlCall).state !== 'running', { timeoutMs: 5_000 });
    const ended = await callController(suite.mesh.dir, 'calls', { id: running.id });
    expect(ended.result).toMatchObject({ id: running.id, verb: 'test.slow', args: ['pause'], caller: 'operator', state: 'answered', answer: { text: 'slept 1200 ms', result: { slept: 1200 }, truncated: false } });
    expect((ended.result as ControlCall).took_ms).toBeGreaterThanOrEqual(1_150);
    expect(ended.text).toMatch(/answered after \d+ s/);

    const listed = (await callController(suite.mesh.dir, 'calls', { limit: 2 })).result as { calls: ControlCall[] };
    expect(listed.calls.map((call) => call.id)[0]).toBe(running.id);
    expect(listed.calls).toHaveLength(2);
  });

  test('keeps a refusal on its call, and keeps no call of a verb that only reads', async () => {
    const before = ((await callController(suite.mesh.dir, 'calls', { limit: 1000 })).result as { calls: ControlCall[] }).calls.length;
    const composedBefore = serving.status.latest()?.composed_at;
    await expect(callController(suite.mesh.dir, 'token.issue', {})).rejects.toBeInstanceOf(ControllerRefused);
    // Every acting verb, however it ended, has status composed again.
    await eventually('status is composed after the acting verb', () => serving.status.latest()?.composed_at !== composedBefore);
    await callController(suite.mesh.dir, 'nodes.list', {});
    await callController(suite.mesh.dir, 'status', {});
    const after = ((await callController(suite.mesh.dir, 'calls', { limit: 1000 })).result as { calls: ControlCall[] }).calls;
    expect(after).toHaveLength(before + 1);
    expect(after[0]).toMatchObject({ verb: 'token.issue', state: 'refused', error: { condition: 'TokenTargetMissing' } });
  });

  test('keeps a token issue as a call without its answer, which carries the one-time token', async () => {
    const answer = await callController(suite.mesh.dir, 'token.issue', { new: true });
    const token = (answer.result as { token: string }).token;
    const call = ((await callController(suite.mesh.dir, 'calls', { limit: 1 })).result as { calls: ControlCall[] }).calls[0];
    expect(call).toMatchObject({ verb: 'token.issue', args: ['new'], state: 'answered', answer: { result: null, truncated: false } });
    expect(call?.answer?.text).toMatch(/carried a secret .* it is not kept/);
    const { kv } = await openCallsBucket(serving.ctx.nc);
    expect((await kv.get(call?.id ?? ''))?.string()).not.toContain(token);
  });

  test('refuses a call id it does not keep', async () => {
    const error = await callController(suite.mesh.dir, 'calls', { id: '000000000-00000000' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ condition: 'CallNotFound', value: '000000000-00000000' });
  });
});

describe('calls across a restart', () => {
  test('a controller starting marks a stopped one\'s running calls abandoned, and reads the others back', async () => {
    const first = await serve();
    first.verbs.scoped('test').register('test.quick', z.strictObject({}), async () => ({ result: null, text: 'done' }));
    await callController(suite.mesh.dir, 'test.quick', {});
    const kept = ((await callController(suite.mesh.dir, 'calls', { limit: 1 })).result as { calls: ControlCall[] }).calls[0] as ControlCall;
    // A call the stopped controller never finished, as it left it in the bucket.
    const { kv } = await openCallsBucket(first.ctx.nc);
    const orphan: ControlCall = { ...kept, id: '000000001-0000abcd', verb: 'node.release', instance: 'ffffffffffffffff', state: 'running', ended_at: null, took_ms: null, answer: null };
    await kv.put(orphan.id, JSON.stringify(orphan));
    await first.stop();

    const second = await serve();
    const abandoned = (await callController(suite.mesh.dir, 'calls', { id: orphan.id })).result as ControlCall;
    expect(abandoned).toMatchObject({ state: 'abandoned', error: { condition: 'CallAbandoned' } });
    expect(abandoned.ended_at).not.toBeNull();
    expect((await callController(suite.mesh.dir, 'calls', { id: kept.id })).result).toEqual(kept);
    // The last 1,000 calls, for 14 days; the oldest go first when full.
    const { jsm, stream } = await openCallsBucket(second.ctx.nc);
    expect(stream).toBe(`KV_${CALLS_BUCKET}`);
    expect((await jsm.streams.info(stream)).config).toMatchObject({ max_msgs: 1_000, max_age: 14 * 86_400_000 * 1_000_000, discard: 'old', max_msgs_per_subject: 1 });
    // Two controllers' starts and the bucket's checks, each bounded by the broker's 20 s timeouts.
  }, 90_000);
});

describe('a child failing past its budget', () => {
  // A child failing past its budget stops the whole controller, giving the lease back, with
  // SupervisorEscalated naming the child and its last error: the `escalated` paths of
  // model-tests/supervisor-controller-tree.model.test.ts walk it for each restart policy.
  test('stops the controller, giving the lease back, with an error naming the child and its last error', async () => {
    const serving = await serve();
    expect(serving.kill('declarations', 'first failure')).toBe(true);
    await eventually('declarations is restarted', () => childOf(serving.tree(), 'declarations').restarts === 1 && childOf(serving.tree(), 'declarations').child_state === 'running');
    expect(serving.kill('declarations', 'second failure')).toBe(true);
    const error = await serving.ended;
    expect(error).toBeInstanceOf(SupervisorEscalated);
    expect(error.message).toBe('supervisor "controller" gave up on child "declarations" after more than 1 restart in 10000 ms; last error: "second failure"');
    expect(error.exitCode).toBe(1);
    // Given back: the next controller takes the lease on its first try, not after standing by
    // until it expires (15 s).
    const log: string[] = [];
    const next = await serve({ ...FAST, log: (line) => log.push(line) });
    expect(next.lease.isActing()).toBe(true);
    expect(log.filter((line) => line.includes('standing by'))).toEqual([]);
    await next.stop();
  });

  test('a bus connection closed for good makes the controller end naming `bus`', async () => {
    const serving = await serve();
    await serving.ctx.nc.close();
    const error = await serving.ended;
    expect(error).toBeInstanceOf(SupervisorEscalated);
    expect(error.message).toContain('gave up on child "bus"');
    expect(error.value).toMatch(/the connection to the broker at tls:\/\/127\.0\.0\.1:\d+ (closed|is closed)/);
  });
});
