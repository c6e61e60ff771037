import type { NatsConnection } from '@nats-io/transport-node';
import type { ControllerStatus } from '../../../schema/controller-status';
import type { Profile } from '../../../schema/profile';
import type { HostKind } from '../../../schema/resource';
import { startHeartbeats, type Heartbeats } from '../../host/link/heartbeat-sender';
import { LinkClock } from '../../host/link/link-clock';
import { heartbeatSubject } from '../../shared/bus/subjects';
import { ready } from '../../shared/crypto';
import { connectMember, fleetMembers, probeFleetBroker, type FleetBroker, type FleetMember } from '../../../bench/fleet/fleet-member';
import { callController } from '../control/call-controller';
import type { NodeListing } from '../nodes/list-nodes';
import type { NodePage } from '../nodes/list-node-page';
import { getNode, upsertNode } from '../store/nodes.repo';
import { serveController, type ServingController } from '../serve/serve-controller';
import { eventually } from '../serve/testing/eventually';
import { useTestMesh } from '../serve/testing/use-test-mesh';

// The controller's view of nodes going away and coming back, over a real TLS broker and a real
// PostgreSQL: nodes connect with their own keys and send heartbeats with the host's own sender,
// then stop; `mesh-control serve`'s presence watch (its heartbeats child) shows them
// disconnected, and their next heartbeat brings them back. Periods are short here (a resident
// node's bound is 3 s), and an episodic node's period is an hour, so the test never races it.

const suite = useTestMesh();

const PERIODS: Readonly<Record<HostKind, number>> = { resident: 1_000, episodic: 3_600_000 };
/** How often the nodes here beat: well inside the resident period, so a loaded machine does not mark a live node away. */
const BEAT_MS = 200;
const WAIT = { timeoutMs: 30_000 };

function profileOf(name: string, kind: HostKind): Profile {
  return {
    os: { id: kind === 'episodic' ? 'android' : 'alpine' },
    arch: 'aarch64',
    kernel: '6.6.0',
    init: kind === 'episodic' ? 'none' : 'openrc',
    package_manager: kind === 'episodic' ? 'none' : 'apk',
    container_runtime: 'none',
    graphical_session: false,
    host_kind: kind,
    hostname: name,
  };
}

/** A simulated node: its own keys and connection, and the host's heartbeat sender on it. */
class BeatingNode {
  private connection: NatsConnection | undefined;
  private heartbeats: Heartbeats | undefined;
  readonly clock = new LinkClock(null);

  constructor(readonly member: FleetMember, private readonly kind: HostKind) {}

  /** Links and beats: the host's first heartbeat of a link says how long it was unlinked before. */
  async link(broker: FleetBroker): Promise<NatsConnection> {
    this.connection = await connectMember(this.member, broker);
    this.clock.up(new Date());
    this.heartbeats = startHeartbeats(this.connection, {
      node: this.member.name,
      hostKind: this.kind,
      clock: this.clock,
      lastReconcileAt: () => null,
      uptimeSeconds: () => 1,
      now: () => new Date(),
    }, BEAT_MS);
    return this.connection;
  }

  /** Stops beating and drops its connection, as a machine shut or a phone killed does. */
  async stop(): Promise<void> {
    this.heartbeats?.stop();
    this.clock.down(new Date());
    await this.connection?.close();
    this.connection = undefined;
  }
}

describe('the controller\'s view of a node going away and coming back', () => {
  let serving: ServingController;
  let broker: FleetBroker;
  const logs: string[] = [];
  const nodes = new Map<string, BeatingNode>();

  const stateOf = async (name: string): Promise<string | undefined> => (await getNode(serving.ctx.store, name))?.lifecycle_state;
  const listed = async (name: string): Promise<NodeListing | undefined> =>
    ((await callController(suite.mesh.dir, 'nodes.list', {})).result as NodePage).nodes.find((node) => node.name === name);

  /** A node with a row and a broker user, as enrolment leaves it, heard from once its heartbeat arrives. */
  async function enrolledNode(name: string, kind: HostKind, options: { beat?: boolean } = {}): Promise<BeatingNode> {
    const [member] = fleetMembers(1, name).map((made) => ({ ...made, name }));
    if (member === undefined) throw new Error('no member made');
    await upsertNode(serving.ctx.store, {
      name, lifecycle_state: 'enrolled', public_key: member.identity.public_key, nkey: member.identity.nkey_public, profile: profileOf(name, kind), enrolled_at: serving.ctx.now(),
    }, serving.ctx.now());
    await serving.ctx.broker.addNode(name, member.identity.nkey_public);
    const node = new BeatingNode(member, kind);
    nodes.set(name, node);
    if (options.beat !== false) {
      await node.link(broker);
      await eventually(`${name}'s first heartbeat is recorded`, async () => (await getNode(serving.ctx.store, name))?.last_seen_at != null, WAIT);
    }
    return node;
  }

  beforeAll(async () => {
    await ready();
    serving = await serveController(suite.mesh.dir, { log: (line) => logs.push(line), presenceEveryMs: 100, heartbeatPeriods: PERIODS, statusEveryMs: 200 });
    broker = await probeFleetBroker(suite.mesh.config.broker.url, suite.mesh.config.broker.fingerprint);
  }, 60_000);

  afterAll(async () => {
    for (const node of nodes.values()) await node.stop();
    await serving?.stop();
  }, 90_000);

  test('a resident node that stops is shown disconnected since it was last heard, in nodes and status, and raises no problem', async () => {
    const kitchen = await enrolledNode('kitchen', 'resident');
    // Beating, it stays enrolled for longer than its bound.
    const beatenFor = async (): Promise<number> => {
      const row = await getNode(serving.ctx.store, 'kitchen');
      return (row?.last_seen_at?.getTime() ?? 0) - (row?.enrolled_at?.getTime() ?? Infinity);
    };
    await eventually('kitchen has beaten for longer than its bound', async () => (await beatenFor()) > 3 * PERIODS.resident + 500, WAIT);
    expect(await stateOf('kitchen')).toBe('enrolled');
    await kitchen.stop();
    await eventually('kitchen is shown disconnected', async () => (await stateOf('kitchen')) === 'disconnected', WAIT);

    const row = await getNode(serving.ctx.store, 'kitchen');
    const listing = await listed('kitchen');
    expect(listing).toMatchObject({ lifecycle_state: 'disconnected', host_kind: 'resident', silence_bound_seconds: 3, last_away: null });
    // Since when: the moment it was last heard from, not the moment the watch noticed.
    expect(listing?.disconnected_since).toBe(row?.last_seen_at?.toISOString());
    const text = (await callController(suite.mesh.dir, 'nodes.list', {})).text;
    expect(text).toMatch(/^NAME +STATE +KIND +ADDRESS +VERSION +LAST SEEN +AWAY\n/);
    expect(text).toMatch(new RegExp(`\\nkitchen +disconnected +resident +- +\\S+ +last seen \\d+ s ago \\(bound 3 s\\) +\\d+ s, since ${listing?.disconnected_since?.replaceAll('.', '\\.')}`));
    expect(logs).toContainEqual(expect.stringMatching(/^presence: node kitchen \(resident\) is disconnected: not heard from since /));

    await eventually('status shows kitchen away', () => serving.status.latest()?.nodes.disconnected.some((node) => node.node === 'kitchen') === true, { ...WAIT, seen: () => JSON.stringify(serving.status.latest()?.nodes) });
    const answer = await callController(suite.mesh.dir, 'status', {});
    const status = answer.result as ControllerStatus;
    expect(status.nodes.disconnected).toContainEqual({ node: 'kitchen', host_kind: 'resident', since: listing?.disconnected_since });
    expect(status.nodes.by_state.disconnected).toBeGreaterThanOrEqual(1);
    expect(status.problems.filter((problem) => problem.subject === 'kitchen')).toEqual([]);
    expect(answer.text).toMatch(/\ndisconnected: \d+: .*kitchen \(resident\) since \S+, \d+ s/);
  }, 90_000);

  test('its next heartbeat makes it enrolled again, keeping how long it was away, by the controller and by the host', async () => {
    const kitchen = nodes.get('kitchen');
    if (kitchen === undefined) throw new Error('the test before made kitchen');
    expect(await stateOf('kitchen')).toBe('disconnected');
    const away = (await listed('kitchen'))?.disconnected_since;
    await kitchen.link(broker);
    await eventually('kitchen is enrolled again', async () => (await stateOf('kitchen')) === 'enrolled', WAIT);

    const listing = await listed('kitchen');
    expect(listing?.disconnected_since).toBeNull();
    expect(listing?.last_away).not.toBeNull();
    const back = Date.parse(listing?.last_away?.back_at ?? '');
    expect(listing?.last_away?.seconds).toBe(Math.round((back - Date.parse(away ?? '')) / 1000));
    // The host's own account: its first heartbeat of the new link said how long it was unlinked.
    expect(listing?.host_away_seconds).toBeGreaterThan(0);
    expect(logs).toContainEqual(expect.stringMatching(/^presence: node kitchen is enrolled again after \d+ s away \(silent since \S+\); it says it was unlinked \d+ s$/));
    const text = (await callController(suite.mesh.dir, 'nodes.list', {})).text;
    expect(text).toMatch(/\nkitchen +enrolled +resident .* back \d+ s ago after \d+ s/);
  }, 90_000);

  test('an episodic node as silent as a resident one shown away is not, since its bound is its own kind\'s', async () => {
    const phone = await enrolledNode('phone', 'episodic');
    const shelf = await enrolledNode('shelf', 'resident');
    // A tablet that enrolled and was never heard from: its kind is known from its profile alone.
    await enrolledNode('tablet', 'episodic', { beat: false });
    await phone.stop();
    await shelf.stop();
    // The phone went quiet first, so every judgement that found the shelf silent past its bound found the phone more silent still.
    await eventually('shelf is shown disconnected', async () => (await stateOf('shelf')) === 'disconnected', WAIT);
    expect(await stateOf('phone')).toBe('enrolled');
    expect(await stateOf('tablet')).toBe('enrolled');
    expect(await listed('phone')).toMatchObject({ host_kind: 'episodic', silence_bound_seconds: 10_800, lifecycle_state: 'enrolled' });
    expect(await listed('tablet')).toMatchObject({ host_kind: 'episodic', lifecycle_state: 'enrolled', last_seen_at: null });

    await eventually('status counts kinds', () => (serving.status.latest()?.nodes.by_kind.episodic ?? 0) >= 2, { ...WAIT, seen: () => JSON.stringify(serving.status.latest()?.nodes) });
    const answer = await callController(suite.mesh.dir, 'status', {});
    expect((answer.result as ControllerStatus).nodes.disconnected.map((node) => node.node)).not.toContain('phone');
    expect(answer.text).toMatch(/\nnodes: \d+ \(.*\); holding an identity: \d+ episodic, \d+ resident\n/);
  }, 90_000);

  test('a heartbeat claiming another node\'s name does not bring that node back, on its own subject or on the other\'s', async () => {
    expect(await stateOf('shelf')).toBe('disconnected');
    const mallory = await enrolledNode('mallory', 'resident');
    const connection = await connectMember(mallory.member, broker);
    try {
      const forged = { node: 'shelf', sent_at: new Date().toISOString(), version_running: '0.1.0', host_kind: 'resident', seconds_since_linked: 0, last_reconcile_at: null, uptime_seconds: 1 };
      connection.publish(heartbeatSubject('mallory'), JSON.stringify(forged));
      // Its own broker user may not publish on another node's subject: the broker drops it.
      connection.publish(heartbeatSubject('shelf'), JSON.stringify(forged));
      await connection.flush();
      await eventually('the forged heartbeat is ignored', () => logs.some((line) => line === 'reports: a heartbeat on mesh.node.mallory.heartbeat ignored: it is not a heartbeat of node mallory'), WAIT);
      const heard = (await getNode(serving.ctx.store, 'mallory'))?.last_seen_at?.getTime() ?? 0;
      await eventually('mallory\'s own heartbeats go on being recorded after', async () => ((await getNode(serving.ctx.store, 'mallory'))?.last_seen_at?.getTime() ?? 0) > heard, WAIT);
    } finally {
      await connection.close();
    }
    expect(await stateOf('shelf')).toBe('disconnected');
    expect((await listed('shelf'))?.last_away).toBeNull();
  }, 90_000);

  test('a heartbeat for a name the store does not know makes no node, even from a user allowed to send it', async () => {
    const body = { node: 'ghost', sent_at: new Date().toISOString(), version_running: '0.1.0', host_kind: 'episodic', seconds_since_linked: 5, last_reconcile_at: null, uptime_seconds: 1 };
    // The controller's own user may publish anywhere: the bus alone would let this through.
    serving.ctx.nc.publish(heartbeatSubject('ghost'), JSON.stringify(body));
    await eventually('the heartbeat for ghost is ignored', () => logs.some((line) => line.startsWith('reports: a heartbeat of node ghost ignored: the store has no such node')), WAIT);
    expect(await getNode(serving.ctx.store, 'ghost')).toBeUndefined();
    expect(await listed('ghost')).toBeUndefined();
  });
});
