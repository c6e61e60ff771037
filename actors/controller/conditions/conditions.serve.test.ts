import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DECLARATION_STREAM } from '../../shared/bus/subjects';
import type { Condition, ConditionEvent } from '../../../schema/condition';
import type { ControllerStatus } from '../../../schema/controller-status';
import type { DoctorReport } from '../../../schema/doctor';
import type { Profile } from '../../../schema/profile';
import type { HostKind } from '../../../schema/resource';
import { startHeartbeats, type Heartbeats } from '../../host/link/heartbeat-sender';
import { LinkClock } from '../../host/link/link-clock';
import { ready } from '../../shared/crypto';
import { connectMember, fleetMembers, probeFleetBroker, type FleetBroker, type FleetMember } from '../../../bench/fleet/fleet-member';
import { ConditionsCommand, ConditionsHistoryCommand, ConditionsShowCommand, ConditionsSilenceCommand } from '../cli/conditions.command';
import { StatusCommand } from '../cli/status.command';
import { runCommand } from '../cli/testing/run-command';
import { callController } from '../control/call-controller';
import { getNode, upsertNode } from '../store/nodes.repo';
import { serveController, type ServeControllerOptions, type ServingController } from '../serve/serve-controller';
import { eventually } from '../serve/testing/eventually';
import { useTestMesh } from '../serve/testing/use-test-mesh';

// The watchdog in `mesh-control serve` over a real TLS broker and a real PostgreSQL: a node
// beating with the host's own heartbeat sender stops, and the controller raises its condition;
// a person silences it with the CLI; the controller is stopped and served again. Heartbeat
// periods are short here (a resident node's bound is 3 s) and the watchdog looks every 200 ms.

const suite = useTestMesh();
const PERIODS: Readonly<Record<HostKind, number>> = { resident: 1_000, episodic: 3_600_000 };
const BOUND_MS = 3 * PERIODS.resident;
const BEAT_MS = 200;
const WAIT = { timeoutMs: 30_000 };
const ID = 'heartbeat-silent.kitchen';

function profileOf(name: string): Profile {
  return { os: { id: 'alpine' }, arch: 'aarch64', kernel: '6.6.0', init: 'openrc', package_manager: 'apk', container_runtime: 'none', graphical_session: false, host_kind: 'resident', hostname: name };
}

/** A simulated resident node: its own keys and connection, and the host's heartbeat sender on it. */
class BeatingNode {
  private connection: NatsConnection | undefined;
  private heartbeats: Heartbeats | undefined;
  private readonly clock = new LinkClock(null);

  constructor(readonly member: FleetMember) {}

  async link(broker: FleetBroker): Promise<void> {
    this.connection = await connectMember(this.member, broker);
    this.clock.up(new Date());
    this.heartbeats = startHeartbeats(this.connection, { node: this.member.name, hostKind: 'resident', clock: this.clock, lastReconcileAt: () => null, uptimeSeconds: () => 1, now: () => new Date() }, BEAT_MS);
  }

  async stop(): Promise<void> {
    this.heartbeats?.stop();
    this.clock.down(new Date());
    await this.connection?.close();
    this.connection = undefined;
  }
}

describe('conditions raised by the serving controller\'s watchdog', () => {
  let serving: ServingController | undefined;
  let broker: FleetBroker;
  let kitchen: BeatingNode;
  const logs: string[] = [];
  const options: ServeControllerOptions = {
    log: (line) => logs.push(line),
    presenceEveryMs: 100,
    heartbeatPeriods: PERIODS,
    statusEveryMs: 200,
    conditions: { watchdogEveryMs: 200 },
    // The doctor would fail kitchen's missing report: these tests are about its heartbeats.
    doctor: { everyMs: 600_000, firstAfterMs: 600_000 },
  };
  const current = (): ServingController => {
    if (serving === undefined) throw new Error('no controller serving');
    return serving;
  };
  const open = async (): Promise<Condition[]> => ((await callController(suite.mesh.dir, 'conditions', {})).result as { conditions: Condition[] }).conditions;
  const kitchenCondition = async (): Promise<Condition | undefined> => (await open()).find((condition) => condition.id === ID);

  beforeAll(async () => {
    await ready();
    serving = await serveController(suite.mesh.dir, options);
    broker = await probeFleetBroker(suite.mesh.config.broker.url, suite.mesh.config.broker.fingerprint);
    const [member] = fleetMembers(1, 'kitchen').map((made) => ({ ...made, name: 'kitchen' }));
    if (member === undefined) throw new Error('no member made');
    const now = current().ctx.now();
    await upsertNode(current().ctx.store, { name: 'kitchen', lifecycle_state: 'enrolled', public_key: member.identity.public_key, nkey: member.identity.nkey_public, profile: profileOf('kitchen'), enrolled_at: now }, now);
    await current().ctx.broker.addNode('kitchen', member.identity.nkey_public);
    kitchen = new BeatingNode(member);
    await kitchen.link(broker);
  }, 60_000);

  afterAll(async () => {
    await kitchen?.stop();
    await serving?.stop();
  }, 90_000);

  test('a beating node raises nothing, and status says all well', async () => {
    await eventually('kitchen has beaten for longer than its bound', async () => {
      const row = await getNode(current().ctx.store, 'kitchen');
      return (row?.last_seen_at?.getTime() ?? 0) - (row?.enrolled_at?.getTime() ?? Infinity) > BOUND_MS + 500;
    }, WAIT);
    expect(await kitchenCondition()).toBeUndefined();
    await eventually('status is composed with the conditions read', () => current().status.latest()?.conditions !== undefined, WAIT);
    const run = await runCommand(StatusCommand, ['status', '--dir', suite.mesh.dir]);
    expect(run.stdout).toMatch(/^all well: no condition open, no problem\ncomposed /);
    const json = JSON.parse((await runCommand(StatusCommand, ['status', '--dir', suite.mesh.dir, '--json'])).stdout) as ControllerStatus;
    expect(json).toMatchObject({ all_well: true, conditions: { open: 0, unreadable: null, list: [] } });
    // Status's fields from before are all still there.
    expect(Object.keys(json)).toEqual(expect.arrayContaining(['composed_at', 'lease', 'nodes', 'declarations', 'refused_reports', 'problems']));
  }, 60_000);

  test('its heartbeats stopping raise heartbeat-silent past its bound, and their return clears it', async () => {
    await kitchen.stop();
    await eventually('heartbeat-silent.kitchen is raised', async () => (await kitchenCondition()) !== undefined, WAIT);
    const raised = await kitchenCondition();
    const heard = (await getNode(current().ctx.store, 'kitchen'))?.last_seen_at?.getTime() ?? 0;
    // Raised past the bound, never inside it.
    expect(Date.parse(raised?.raised_at ?? '')).toBeGreaterThan(heard + BOUND_MS);
    expect(raised).toMatchObject({ kind: 'heartbeat-silent', signal: 'S1', subject: 'kitchen', state: 'open', count: 1, epoch: current().lease.epoch(), silence: null });
    const listed = await runCommand(ConditionsCommand, ['conditions', '--dir', suite.mesh.dir]);
    expect(listed.code).toBe(1);
    expect(listed.stdout).toMatch(/^WARNING heartbeat-silent\.kitchen: node kitchen has sent no heartbeat since \S+ \(bound 3 s\)/m);

    await kitchen.link(broker);
    await eventually('heartbeat-silent.kitchen is cleared', async () => (await kitchenCondition()) === undefined, WAIT);
    const history = ((await callController(suite.mesh.dir, 'conditions.history', { id: ID })).result as { events: ConditionEvent[] }).events;
    expect(history.map((event) => event.event)).toEqual(['condition-cleared', 'condition-raised']);
    const shown = await runCommand(ConditionsShowCommand, ['conditions', 'show', ID, '--dir', suite.mesh.dir, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: ID, state: 'cleared' });
  }, 60_000);

  test('silenced from the CLI, it is still open and status says silenced, not well', async () => {
    await kitchen.stop();
    // Within ten minutes of its clearing: the same condition, raised a second time.
    await eventually('heartbeat-silent.kitchen is raised again', async () => (await kitchenCondition())?.count === 2, WAIT);

    const tooLong = await runCommand(ConditionsSilenceCommand, ['conditions', 'silence', ID, '--for', '8d', '--why', 'away', '--dir', suite.mesh.dir]);
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.stderr).toMatch(/--for is longer than a week.*"8d"/);
    const noWhy = await runCommand(ConditionsSilenceCommand, ['conditions', 'silence', ID, '--for', '2h', '--why', '  ', '--dir', suite.mesh.dir]);
    expect(noWhy.code).not.toBe(0);
    expect(noWhy.stderr).toContain('a silence must say why');
    const unknown = await runCommand(ConditionsSilenceCommand, ['conditions', 'silence', 'heartbeat-silent.nobody', '--for', '2h', '--why', 'x', '--dir', suite.mesh.dir]);
    expect(unknown.stderr).toMatch(/no condition with this id.*"heartbeat-silent\.nobody"/);
    // A caller past the CLI is refused by the controller itself, whole.
    await expect(callController(suite.mesh.dir, 'conditions.silence', { id: ID, for: '8d', why: 'x', by: 'mallory@elsewhere' })).rejects.toMatchObject({ condition: 'SilenceDurationInvalid', value: '8d' });
    await expect(callController(suite.mesh.dir, 'conditions.silence', { id: ID, for: '2h', why: '', by: 'mallory@elsewhere' })).rejects.toMatchObject({ condition: 'SilenceWhyMissing' });
    expect((await kitchenCondition())?.silence).toBeNull();

    const silenced = await runCommand(ConditionsSilenceCommand, ['conditions', 'silence', ID, '--for', '2h', '--why', 'power supply replaced tomorrow', '--dir', suite.mesh.dir]);
    expect(silenced.code).toBe(0);
    const condition = await kitchenCondition();
    expect(condition).toMatchObject({ state: 'open', count: 2, silence: { why: 'power supply replaced tomorrow', by: expect.stringMatching(/@/) } });
    expect(Date.parse(condition?.silence?.until ?? '') - Date.parse(condition?.silence?.at ?? '')).toBe(2 * 3_600_000);

    await eventually('status carries the silence', () => (current().status.latest()?.conditions?.silenced ?? 0) === 1, WAIT);
    const status = await runCommand(StatusCommand, ['status', '--dir', suite.mesh.dir]);
    expect(status.stdout).toMatch(/^NOT WELL: 1 condition open \(1 silenced\):\n {2}WARNING heartbeat-silent\.kitchen: .*silenced until \S+ by \S+: power supply replaced tomorrow/);
    expect(status.stdout).not.toContain('all well');
    expect(current().status.latest()?.all_well).toBe(false);
    const history = await runCommand(ConditionsHistoryCommand, ['conditions', 'history', ID, '--dir', suite.mesh.dir]);
    expect(history.stdout.split('\n')[0]).toMatch(/ changed heartbeat-silent\.kitchen: silenced by \S+ until \S+ \(why: power supply replaced tomorrow\)$/);
    // The silence is a hand act, in the record of hand acts too.
    await eventually('the silence recorded as a hand act', async () => (await current().ctx.store.query("SELECT 1 FROM hand_acts WHERE verb = 'conditions.silence' AND subject = $1 AND why = 'power supply replaced tomorrow'", [ID])).length === 1, WAIT);
  }, 60_000);

  test('a controller restart keeps the open condition and its silence', async () => {
    const before = await kitchenCondition();
    await current().stop();
    serving = undefined;
    serving = await serveController(suite.mesh.dir, options);
    const after = await kitchenCondition();
    expect(after).toMatchObject({ id: ID, state: 'open', count: before?.count, raised_at: before?.raised_at, silence: before?.silence });
    // Past a whole bound of watching, the new controller judges the silence itself and keeps it open.
    await new Promise((resolve) => setTimeout(resolve, BOUND_MS + 1_000));
    // Never cleared meanwhile (a clearing and reopening would have counted it up).
    expect(await kitchenCondition()).toMatchObject({ state: 'open', count: before?.count, silence: before?.silence });
    await eventually('status after the restart says it silenced', () => (current().status.latest()?.conditions?.silenced ?? 0) === 1, WAIT);
  }, 90_000);

  test('a doctor\'s probe that fails (the declaration stream deleted) is raised urgent, and leads status before the silenced one', async () => {
    // A careless operator deletes the declaration stream by hand; the read-back (every five
    // minutes) has not put it back yet when the doctor looks.
    await (await jetstreamManager(current().ctx.nc)).streams.delete(DECLARATION_STREAM);
    const report = (await callController(suite.mesh.dir, 'doctor', {}, { timeoutMs: 60_000 })).result as DoctorReport;
    const failing = report.probes.filter((probe) => probe.verdict === 'fail').map((probe) => `doctor-failing.${probe.probe}`);
    expect(failing).toContain('doctor-failing.declaration-stream');
    await eventually('the failing probes are raised', async () => failing.every((id) => (current().status.latest()?.conditions?.list ?? []).some((condition) => condition.id === id)), WAIT);
    const list = (await open()).map((condition) => [condition.id, condition.severity]);
    // The broker's advisories of the consumers deleted with the stream may be raised urgent too (S9).
    const urgent = list.filter(([, severity]) => severity === 'urgent').map(([id]) => id);
    expect(urgent).toEqual(expect.arrayContaining(failing));
    expect(urgent.every((id) => id?.startsWith('doctor-failing.') || id?.startsWith('bus-advisory.consumer-deleted.'))).toBe(true);
    expect(list.slice(0, urgent.length).every(([, severity]) => severity === 'urgent')).toBe(true);
    const status = await runCommand(StatusCommand, ['status', '--dir', suite.mesh.dir]);
    expect(status.stdout).toMatch(new RegExp(`^NOT WELL: \\d+ conditions open \\(${urgent.length} urgent, 1 silenced\\):\n {2}URGENT (doctor-failing|bus-advisory)\\.`));
  }, 90_000);
});
