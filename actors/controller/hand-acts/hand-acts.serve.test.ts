import type { NatsConnection } from '@nats-io/transport-node';
import { EMPTY_PLAN_CONTEXT } from '../../../machines/plan.machine';
import type { ControllerStatus } from '../../../schema/controller-status';
import type { Profile } from '../../../schema/profile';
import { startHeartbeats, type Heartbeats } from '../../host/link/heartbeat-sender';
import { LinkClock } from '../../host/link/link-clock';
import { ready } from '../../shared/crypto';
import { isOperatorError, type OperatorError } from '../../shared/operator-error';
import { connectMember, fleetMembers, probeFleetBroker, type FleetBroker } from '../../../bench/fleet/fleet-member';
import { callController } from '../control/call-controller';
import type { DurationsListing } from '../durations/format-durations';
import { insertRevision } from '../modules/modules.repo';
import { insertPlan, writePlan } from '../plans/plans.repo';
import { serveController, type ServingController } from '../serve/serve-controller';
import { eventually } from '../serve/testing/eventually';
import { useTestMesh } from '../serve/testing/use-test-mesh';
import { upsertNode } from '../store/nodes.repo';
import type { HandActsListing } from './format-hand-acts';

// Hand acts and durations in `mesh-control serve`, asked over a real TLS broker as the CLI asks,
// on a real PostgreSQL: the verbs that are hand acts keep themselves with why only once done,
// status counts the week's, and a node beating with the host's own heartbeat sender is measured.

const suite = useTestMesh();
const WAIT = { timeoutMs: 30_000 };
const BEAT_MS = 200;

const PROFILE: Profile = {
  os: { id: 'alpine' }, arch: 'aarch64', kernel: '6.6.0', init: 'openrc', package_manager: 'apk', container_runtime: 'none', graphical_session: false, host_kind: 'resident', hostname: 'x',
};

async function refusal(verb: string, args: Record<string, unknown>): Promise<OperatorError> {
  try {
    await callController(suite.mesh.dir, verb, args);
  } catch (error) {
    if (isOperatorError(error)) return error;
    throw error;
  }
  throw new Error(`${verb} was not refused`);
}

describe('hand acts and durations in a serving controller', () => {
  let serving: ServingController;
  let broker: FleetBroker;
  const connections: NatsConnection[] = [];
  const beats: Heartbeats[] = [];
  const handActs = async (args: Record<string, unknown> = {}): Promise<HandActsListing> => (await callController(suite.mesh.dir, 'hand-acts', args)).result as HandActsListing;

  /** A node with a row and a broker user, as enrolment leaves it, beating when asked. */
  async function enrolledNode(name: string, beat: boolean): Promise<void> {
    const [member] = fleetMembers(1, name).map((made) => ({ ...made, name }));
    if (member === undefined) throw new Error('no member made');
    await upsertNode(serving.ctx.store, { name, lifecycle_state: 'enrolled', public_key: member.identity.public_key, nkey: member.identity.nkey_public, profile: { ...PROFILE, hostname: name }, enrolled_at: serving.ctx.now() }, serving.ctx.now());
    await serving.ctx.broker.addNode(name, member.identity.nkey_public);
    if (!beat) return;
    const connection = await connectMember(member, broker);
    connections.push(connection);
    const clock = new LinkClock(null);
    clock.up(new Date());
    beats.push(startHeartbeats(connection, { node: name, hostKind: 'resident', clock, lastReconcileAt: () => null, uptimeSeconds: () => 1, now: () => new Date() }, BEAT_MS));
  }

  beforeAll(async () => {
    await ready();
    serving = await serveController(suite.mesh.dir, { log: () => undefined, statusEveryMs: 200 });
    broker = await probeFleetBroker(suite.mesh.config.broker.url, suite.mesh.config.broker.fingerprint);
  }, 60_000);

  afterAll(async () => {
    for (const beat of beats) beat.stop();
    for (const connection of connections) await connection.close();
    await serving?.stop();
  }, 60_000);

  test('a push without --why is refused naming how to give it, and neither pushes nor records anything', async () => {
    const refused = await refusal('push', { node: 'nowhere' });
    expect(refused.message).toBe('`push` is a hand act and is kept with its reason: --why is required; nothing was done');
    expect(refused.next).toBe('say in a line why you do it by hand, e.g. mesh-control push nowhere --why "its disk was replaced"');
    // Given a reason, the push itself is refused (no such node): an act not done is not recorded.
    expect((await refusal('push', { node: 'nowhere', why: 'testing' })).message).not.toMatch(/why/);
    expect((await refusal('push', { why: 'x', condition: 'not an id' })).value).toBe('not an id');
    expect((await handActs()).total).toBe(0);
  }, 60_000);

  test('hand-act record keeps the act with why and condition; the same cause twice is listed as repeated; status counts the week\'s', async () => {
    const recorded = await callController(suite.mesh.dir, 'hand-act.record', { why: 'Reset kitchen\'s consumer', condition: 'consumer-deleted.kitchen' });
    expect(recorded.text).toMatch(/^recorded: \S+ #\d+ hand-act\.record \[condition consumer-deleted\.kitchen\]: Reset kitchen's consumer$/);
    await callController(suite.mesh.dir, 'hand-act.record', { why: 'reset it again' , condition: 'consumer-deleted.kitchen' });
    expect((await refusal('hand-act.record', {})).message).toMatch(/--why is required/);
    const listing = await handActs();
    expect(listing.total).toBe(2);
    expect(listing.repeated).toEqual([expect.objectContaining({ by: 'condition', cause: 'consumer-deleted.kitchen', count: 2, verbs: ['hand-act.record'] })]);
    const text = (await callController(suite.mesh.dir, 'hand-acts', {})).text;
    expect(text).toMatch(/^hand acts since \S+: 2\nrepeated causes:\n {2}2× condition consumer-deleted\.kitchen — hand-act\.record; /);
    await eventually('status counts the week\'s hand acts', () => (serving.status.latest()?.hand_acts_week ?? 0) >= 2, { ...WAIT, seen: () => String(serving.status.latest()?.hand_acts_week) });
    const status = await callController(suite.mesh.dir, 'status', {});
    expect((status.result as ControllerStatus).hand_acts_week).toBe(2);
    expect(status.text).toMatch(/\nhand acts this week: 2 \(mesh-control hand-acts lists them and the causes that came back\)\n/);
    expect((await refusal('hand-acts', { since: '2y' })).next).toMatch(/--since 7d/);
  }, 60_000);

  test('node revoke, plans close: each kept once done, with its subject; a retry refused is not', async () => {
    await enrolledNode('laptop-7', false);
    await callController(suite.mesh.dir, 'node.revoke', { node: 'laptop-7', why: 'stolen from the car', condition: 'heartbeat-missing.laptop-7' });
    const at = serving.ctx.now();
    await insertRevision(serving.ctx.store, { name: 'web', version: '1.0', upgrade_policy: 'record', resources: [], digest: 'a'.repeat(64), source: null, added_at: at });
    const opened = await insertPlan(serving.ctx.store, { module: 'web', version: '1.0', context: { ...EMPTY_PLAN_CONTEXT, policy: 'record', targets: ['laptop-7'] }, epoch: serving.lease.epoch(), at });
    await writePlan(serving.ctx.store, opened.id, opened.revision, serving.lease.epoch(), { state: 'held', context: { ...EMPTY_PLAN_CONTEXT, policy: 'record', targets: ['laptop-7'] }, at });
    await callController(suite.mesh.dir, 'plans.close', { id: opened.id, why: 'its only node was revoked' });
    await refusal('plans.retry', { id: opened.id, why: 'try again' });
    const acts = (await handActs()).acts.slice(0, 2);
    expect(acts.map((act) => [act.verb, act.subject, act.why, act.condition])).toEqual([
      ['plans.close', `plan ${opened.id}`, 'its only node was revoked', null],
      ['node.revoke', 'laptop-7', 'stolen from the car', 'heartbeat-missing.laptop-7'],
    ]);
  }, 60_000);

  test('durations: a beating node\'s gaps are counted as heard, per kind, with --kind and --since', async () => {
    await enrolledNode('kitchen', true);
    const gaps = async (): Promise<number> => ((await callController(suite.mesh.dir, 'durations', { kind: 'heartbeat-gap', since: '1h' })).result as DurationsListing).kinds[0]?.count ?? 0;
    await eventually('a few heartbeat gaps are counted', async () => (await gaps()) >= 3, WAIT);
    const answer = await callController(suite.mesh.dir, 'durations', {});
    const listing = answer.result as DurationsListing;
    expect(listing.kinds.map((kind) => kind.kind)).toEqual(['apply', 'heartbeat-gap', 'plan-tier']);
    const beating = listing.kinds[1];
    // The host beats every 200 ms; the controller hears them further apart only when loaded.
    expect(beating?.median_ms).toBeGreaterThan(100);
    expect(answer.text).toMatch(/^durations heard since \S+ \(--since 24h; quantiles within about 5 %\)\nKIND +COUNT +MEDIAN +P90 +P99\napply +0 +- +- +-\nheartbeat-gap +\d+ +\d+ ms/);
    expect((await refusal('durations', { kind: 'build' })).message).toMatch(/`durations` argument `kind`: expected one of apply, heartbeat-gap, plan-tier/);
    expect((await refusal('durations', { since: '45d' })).message).toBe('--since is longer than 30d, longer than what is kept: "45d"');
  }, 60_000);
});
