import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Condition } from '../../../schema/condition';
import type { Profile } from '../../../schema/profile';
import { DECLARATION_STREAM, declarationConsumer, declarationSubject } from '../../shared/bus/subjects';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { callController } from '../control/call-controller';
import { addNodeConsumer, openNodeConsumer } from '../declarations/declaration-stream';
import { readBackDeclarations } from '../declarations/read-back-declarations';
import { serveController, type ServeControllerOptions, type ServingController } from '../serve/serve-controller';
import { eventually } from '../serve/testing/eventually';
import { useTestMesh } from '../serve/testing/use-test-mesh';
import { upsertNode } from '../store/nodes.repo';
import { ADVISORY_SUBJECTS } from './bus-advisories';

// The rows S3, S9 and S13 in `mesh-control serve` over the real nats-server 2.9 (TLS, the MESH
// and NODES accounts as `mesh-control broker` writes them) and a real PostgreSQL: the broker's
// advisories are heard by the controller's user in MESH, where JetStream publishes them; a plan
// late in its tier and a node's reports refused as stale are read from the store. The watchdog
// looks every 200 ms, with bounds of a second.

const suite = useTestMesh();
const WAIT = { timeoutMs: 30_000 };

function profileOf(name: string): Profile {
  return { os: { id: 'alpine' }, arch: 'aarch64', kernel: '6.6.0', init: 'openrc', package_manager: 'apk', container_runtime: 'none', graphical_session: false, host_kind: 'resident', hostname: name };
}

describe('the watchdog\'s rows S3, S9 and S13 in a serving controller', () => {
  let serving: ServingController;
  const logs: string[] = [];
  const options: ServeControllerOptions = {
    log: (line) => logs.push(line),
    // Heartbeats are another test's: the node here never beats, and is not judged silent.
    heartbeatPeriods: { resident: 3_600_000, episodic: 3_600_000 },
    conditions: { watchdogEveryMs: 200, settings: { planTierLateMs: 1_000, staleRefusalsMs: 1_000, reportAfterSendMs: 3_600_000 } },
    doctor: { everyMs: 600_000, firstAfterMs: 600_000 },
  };
  const open = async (): Promise<Condition[]> => ((await callController(suite.mesh.dir, 'conditions', {})).result as { conditions: Condition[] }).conditions;
  const condition = async (id: string): Promise<Condition | undefined> => (await open()).find((item) => item.id === id);

  beforeAll(async () => {
    await ready();
    serving = await serveController(suite.mesh.dir, options);
    const now = serving.ctx.now();
    const identity = generateNodeIdentity();
    await upsertNode(serving.ctx.store, { name: 'kitchen', lifecycle_state: 'enrolled', public_key: identity.public_key, nkey: identity.nkey_public, profile: profileOf('kitchen'), enrolled_at: now }, now);
    await openNodeConsumer(serving.ctx.nc, 'kitchen', { fresh: false });
  }, 60_000);

  afterAll(async () => {
    await serving?.stop();
  }, 60_000);

  test('S9: a node\'s consumer deleted by hand is heard from the broker and raised urgent, and cleared once the read-back makes it again', async () => {
    const manager = await jetstreamManager(serving.ctx.nc);
    await manager.consumers.delete(DECLARATION_STREAM, declarationConsumer('kitchen'));
    const id = 'bus-advisory.consumer-deleted.kitchen';
    await eventually(`${id} is raised`, async () => (await condition(id)) !== undefined, WAIT);
    expect(await condition(id)).toMatchObject({ kind: 'bus-advisory', signal: 'S9', subject: 'consumer-deleted.kitchen', severity: 'urgent', state: 'open' });
    expect((await condition(id))?.detail).toMatch(/^node kitchen's declaration consumer was deleted at \S+ and is not there again/);
    expect(logs.some((line) => line.startsWith('broker: node kitchen\'s declaration consumer was deleted'))).toBe(true);

    await readBackDeclarations(serving.ctx);
    await eventually(`${id} is cleared`, async () => (await condition(id)) === undefined, WAIT);
  }, 60_000);

  test('S9: a declaration given up on at its maximum deliveries is raised, kept unchanged across a restart of the controller, and cleared once the node\'s report is kept', async () => {
    // A consumer someone made by hand with a delivery limit, where kitchen's was.
    let manager = await jetstreamManager(serving.ctx.nc);
    await manager.consumers.delete(DECLARATION_STREAM, declarationConsumer('kitchen'));
    await manager.consumers.add(DECLARATION_STREAM, { durable_name: declarationConsumer('kitchen'), filter_subject: declarationSubject('kitchen'), ack_policy: AckPolicy.Explicit, ack_wait: 300 * 1_000_000, max_deliver: 1 });
    const heard: string[] = [];
    const sub = serving.ctx.nc.subscribe(ADVISORY_SUBJECTS.maxDeliveries, {
      callback: (_error, msg) => {
        heard.push(msg.subject);
      },
    });
    try {
      const js = jetstream(serving.ctx.nc);
      await js.publish(declarationSubject('kitchen'), new TextEncoder().encode('{"not":"a declaration; this consumer only counts deliveries"}'));
      const consumer = await js.consumers.get(DECLARATION_STREAM, declarationConsumer('kitchen'));
      // Delivered once and never acknowledged; the broker gives up at the next delivery it would make.
      await consumer.next({ expires: 1_000 });
      await new Promise((resolve) => setTimeout(resolve, 600));
      await consumer.next({ expires: 1_000 });
      const id = 'bus-advisory.max-deliveries.kitchen';
      await eventually(`${id} is raised`, async () => (await condition(id)) !== undefined, WAIT);
      expect(heard).toContain(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${DECLARATION_STREAM}.${declarationConsumer('kitchen')}`);
      expect(await condition(id)).toMatchObject({ signal: 'S9', severity: 'warning', detail: expect.stringMatching(/^the broker gave up delivering node kitchen its declaration at \S+: the declaration at stream sequence \d+ was delivered 1 time\(s\) and never acknowledged/) });

      // The controller restarted hears nothing of it again, yet keeps what the earlier one heard:
      // the same condition, not cleared, not changed, over several looks.
      const before = await condition(id);
      sub.unsubscribe();
      await serving.stop();
      serving = await serveController(suite.mesh.dir, options);
      manager = await jetstreamManager(serving.ctx.nc);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await condition(id)).toEqual(before);

      await serving.ctx.store.query("UPDATE nodes SET reported_at = now() + interval '1 second' WHERE name = 'kitchen'");
      await eventually(`${id} is cleared`, async () => (await condition(id)) === undefined, WAIT);
    } finally {
      sub.unsubscribe();
      await manager.consumers.delete(DECLARATION_STREAM, declarationConsumer('kitchen'));
      await manager.streams.purge(DECLARATION_STREAM, { filter: declarationSubject('kitchen') });
      await addNodeConsumer(manager, 'kitchen', DeliverPolicy.All);
    }
    await eventually('no advisory condition left open', async () => !(await open()).some((item) => item.kind === 'bus-advisory'), WAIT);
  }, 60_000);

  test('S3: a plan awaiting its first machine past its bound is raised, and cleared once it moves on', async () => {
    const sql = serving.ctx.store;
    await sql.query(`INSERT INTO module_revisions (name, version, seq, upgrade_policy, resources, digest, added_at) VALUES ('web', '2', 1, 'one-first', '[]', $1, now())`, ['b'.repeat(64)]);
    const sentAt = new Date(Date.now() - 2_000).toISOString();
    const context = { policy: 'one-first', targets: ['kitchen'], first: 'kitchen', sent: { kitchen: { generation: 3, at: sentAt } }, skipped: {}, failed: {}, firstApplied: false, resendFirst: false, note: null, supersededBy: null };
    const [plan] = await sql.query<{ id: number }>(`INSERT INTO plans (module, version, upgrade_policy, state, context, opened_at, updated_at, epoch) VALUES ('web', '2', 'one-first', 'awaitingFirst', $1, now(), now(), 1) RETURNING id`, [JSON.stringify(context)]);
    const id = `plan-tier-late.${plan?.id}`;
    await eventually(`${id} is raised`, async () => (await condition(id)) !== undefined, WAIT);
    expect((await condition(id))?.detail).toContain(`for its first machine, kitchen, to report on the send`);
    expect((await condition(id))?.show).toBe(`mesh-control plans show ${plan?.id}`);

    await sql.query(`UPDATE plans SET state = 'done', ended_at = now(), updated_at = now() WHERE id = $1`, [plan?.id]);
    await eventually(`${id} is cleared`, async () => (await condition(id)) === undefined, WAIT);
  }, 60_000);

  test('S13: a node\'s reports refused as older past the bound with none kept is raised, and cleared by a kept report', async () => {
    const sql = serving.ctx.store;
    await sql.query(`INSERT INTO report_refusals (node, reason, count, first_at, last_at) VALUES ('kitchen', 'older', 12, now() - interval '5 seconds', now())
                     ON CONFLICT (node, reason) DO UPDATE SET count = 12, first_at = now() - interval '5 seconds', last_at = now()`);
    await sql.query(`UPDATE nodes SET reported_at = now() - interval '1 hour' WHERE name = 'kitchen'`);
    const id = 'reports-refused.kitchen';
    await eventually(`${id} is raised`, async () => (await condition(id)) !== undefined, WAIT);
    expect((await condition(id))?.detail).toMatch(/^node kitchen's reports have been refused as older than one kept from \S+ to \S+ with none kept between \(12 so refused in all/);

    await sql.query(`UPDATE nodes SET reported_at = now() + interval '1 second' WHERE name = 'kitchen'`);
    await eventually(`${id} is cleared`, async () => (await condition(id)) === undefined, WAIT);
  }, 60_000);
});
