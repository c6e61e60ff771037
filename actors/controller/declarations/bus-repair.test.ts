import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Declaration } from '../../../schema/declaration';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import { resourceKey } from '../../../schema/resource';
import { DECLARATION_STREAM, declarationConsumer, declarationSubject, heartbeatSubject, reportSubject } from '../../shared/bus/subjects';
import { generateSigningKeyPair } from '../../shared/crypto';
import { enrolledState } from '../../host/enrolment/enrolled-state';
import { admitDeclaration, type Refused } from '../../host/link/admit-declaration';
import { buildReport } from '../../host/link/build-report';
import { startDeclarationIntake, type DeclarationIntake } from '../../host/link/declaration-intake';
import { buildHeartbeat } from '../../host/link/heartbeat-sender';
import { LinkClock } from '../../host/link/link-clock';
import { recordDeclaration } from '../../host/link/record-declaration';
import { eventually, useTestController, type TestController } from '../enrolment/testing/test-controller';
import type { RunningPart } from '../serve/controller-parts';
import { ensureDeclarationStream } from '../serve/ensure-declaration-stream';
import { composeStatus } from '../status/compose-status';
import { ASSERTED_FOR_MS, busObjects } from './bus-objects';
import { busRepairPart } from './bus-repair.part';
import type { BusRepairKind } from './bus-repairs';
import { nodeWorkQueue } from './node-work-queue';
import { sendCurrent } from './send-current';

// The bus broken by hand, as an operator might by mistake, under the real controller parts
// (enrolment, declarations, reports) on a real TLS nats-server and PostgreSQL, with each node's
// host played by the host's own intake, gate and report builder on a node's own connection.

const ctrl: TestController = useTestController('postgres');

/**
 * A node's host, reduced to its link: the real intake pulls from its consumer, the real gate
 * admits or refuses, and a report of each goes up as the host builds it. Trusting another key
 * than the controller's (`trust`) makes a host that refuses everything it is sent.
 */
class IntakeHost {
  readonly taken: Declaration[] = [];
  readonly refused: Refused[] = [];
  readonly notes: string[] = [];
  private reportSequence = 0;
  private intake: DeclarationIntake | undefined;

  private constructor(
    readonly node: string,
    private state: HostState,
    private readonly connection: NatsConnection,
  ) {}

  /** Enrols a machine as `node` through the controller's enrolment responder, and starts its intake. */
  static async enrol(node: string, options: { trust?: string } = {}): Promise<IntakeHost> {
    const machine = ctrl.machine(node);
    const token = await ctrl.issue();
    const reply = await ctrl.enrol(token, ctrl.requestFor(machine, token));
    if (!reply.ok || reply.node !== node) throw new Error(`${node} did not enrol: ${JSON.stringify(reply)}`);
    const connection = await ctrl.connectNode(node, machine);
    const { identity } = machine;
    const state = enrolledState(
      emptyHostState(),
      { node, nkey_public: identity.nkey_public, public_key: identity.public_key, secret_key: identity.secret_key },
      { broker_url: ctrl.broker.url, broker_fingerprint: ctrl.broker.fingerprint, controller_public_key: options.trust ?? ctrl.ctx.config.controller.public_key },
    );
    const host = new IntakeHost(node, state, connection);
    host.intake = startDeclarationIntake(connection, node, { take: (data) => host.take(data), note: (line) => host.notes.push(line) }, { firstMs: 50, capMs: 250 });
    return host;
  }

  /** The generation the host holds, 0 before any. */
  held(): number {
    return this.state.last_declaration?.applied_generation ?? 0;
  }

  deaf(): boolean {
    return this.intake?.deafness() !== null;
  }

  /** Sends a heartbeat as the host builds it, saying whether its intake is deaf. */
  async heartbeat(): Promise<void> {
    const clock = new LinkClock(null);
    clock.up(new Date());
    const facts = { node: this.node, hostKind: 'resident' as const, clock, lastReconcileAt: () => null, uptimeSeconds: () => 1, now: () => new Date(), deafness: () => this.intake?.deafness() ?? null };
    this.connection.publish(heartbeatSubject(this.node), JSON.stringify(buildHeartbeat(facts, false)));
    await this.connection.flush();
  }

  async stop(): Promise<void> {
    await this.intake?.stop();
    await this.connection.close();
  }

  private async take(data: Uint8Array): Promise<void> {
    const admission = admitDeclaration(JSON.parse(new TextDecoder().decode(data)), this.state);
    if (admission.ok) {
      this.state = recordDeclaration(this.state, admission);
      this.taken.push(admission.declaration);
    } else {
      this.refused.push(admission);
    }
    const declaration = admission.ok ? admission.declaration : undefined;
    const report = buildReport({
      node: this.node,
      state: this.state,
      reportSequence: ++this.reportSequence,
      declaration: this.state.last_declaration,
      results: (declaration?.resources ?? []).map((resource) => ({ key: resourceKey(resource), shape: resource.shape, outcome: 'applied' as const })),
      ...(admission.ok ? {} : { refused: admission }),
      secondsSinceLinked: 0,
      versionRunning: '0.1.0',
      now: new Date(),
    });
    this.connection.publish(reportSubject(this.node), JSON.stringify(report));
    await this.connection.flush();
  }
}

const READ_BACK_MS = 400;

function repairs(kind: BusRepairKind): number {
  return busObjects(ctrl.ctx).repairs.counts().by_kind[kind] ?? 0;
}

async function sentCount(node: string): Promise<number> {
  const [row] = await ctrl.ctx.store.query<{ count: number }>('SELECT count(*)::int AS count FROM declarations WHERE node = $1', [node]);
  return row?.count ?? 0;
}

/** Until the host has taken the full declaration (overlay, reported applied, then full). */
async function settledOn(host: IntakeHost): Promise<void> {
  await eventually(async () => (host.taken.some((declaration) => declaration.kind === 'full') ? true : undefined), `${host.node} to take its full declaration`, 20_000);
  await ctrl.settled();
}

/** Sends the node its current declaration, as `node declare` or a push would, and waits for the host to take it. */
async function nextDeclarationLands(host: IntakeHost): Promise<void> {
  const sent = await nodeWorkQueue(ctrl.ctx).run(host.node, () => sendCurrent(ctrl.ctx, host.node));
  if (sent === undefined) throw new Error(`nothing was sent to ${host.node}`);
  await eventually(async () => (host.held() === sent.generation ? true : undefined), `${host.node} to take generation ${sent.generation}`, 15_000);
}

/** Status as the serving controller composes it, over this controller's store and repairs. */
function statusNow(): ReturnType<typeof composeStatus> {
  return composeStatus({
    store: ctrl.ctx.store,
    gate: { standing: () => ({ state: 'acting', epoch: 3, note: null }) } as never,
    leaseHolder: async () => null,
    tree: () => undefined,
    controller: 'test',
    now: () => new Date(),
    busRepairs: () => busObjects(ctrl.ctx).repairs.counts(),
  });
}

describe('the bus broken by hand', () => {
  const hosts: IntakeHost[] = [];
  let part: RunningPart | undefined;

  afterEach(async () => {
    await part?.stop();
    part = undefined;
  });
  afterAll(async () => {
    await Promise.all(hosts.map((host) => host.stop()));
  });

  async function host(node: string, options: { trust?: string } = {}): Promise<IntakeHost> {
    const made = await IntakeHost.enrol(node, options);
    hosts.push(made);
    return made;
  }

  /** attic and cellar, enrolled by the first test that needs them, each holding its full declaration. */
  async function atticAndCellar(): Promise<[IntakeHost, IntakeHost]> {
    const attic = hosts.find((made) => made.node === 'attic') ?? (await host('attic'));
    const cellar = hosts.find((made) => made.node === 'cellar') ?? (await host('cellar'));
    await settledOn(attic);
    await settledOn(cellar);
    return [attic, cellar];
  }

  test('a deleted stream is made again by the read-back, with every node\'s consumer and declaration, and the next declaration lands', async () => {
    const [attic, cellar] = await atticAndCellar();
    part = await busRepairPart(READ_BACK_MS).start(ctrl.ctx, ctrl.verbs);
    const heldBefore = [attic.held(), cellar.held()];

    const jsm = await jetstreamManager(ctrl.ctx.nc);
    await jsm.streams.delete(DECLARATION_STREAM);
    await eventually(async () => (attic.deaf() ? true : undefined), 'attic\'s host to find itself deaf');

    // Within a read-back or two: stream, both consumers and both slots again, and both hosts take theirs.
    await eventually(async () => (attic.held() > heldBefore[0]! && cellar.held() > heldBefore[1]! ? true : undefined), 'both hosts to take a declaration sent again', 20_000);
    expect(repairs('stream_created')).toBeGreaterThanOrEqual(1);
    expect(repairs('consumer_created')).toBeGreaterThanOrEqual(2);
    expect(repairs('slot_republished')).toBeGreaterThanOrEqual(2);
    expect(ctrl.logs.some((line) => line.startsWith('bus repair (stream created): stream MESH_DECLARATIONS'))).toBe(true);
    await eventually(async () => (!attic.deaf() ? true : undefined), 'attic\'s host to hear again');
    expect(attic.notes.filter((line) => line.startsWith('deaf: '))).toHaveLength(1);

    await nextDeclarationLands(attic);
    await nextDeclarationLands(cellar);
    const status = await statusNow();
    expect(status.bus_repairs?.by_kind.stream_created).toBeGreaterThanOrEqual(1);
    expect(status.bus_repairs?.total).toBeGreaterThanOrEqual(5);
  }, 60_000);

  test('one node\'s deleted consumer is made again within the read-back, the others\' left alone, and its next declaration lands with nothing refused', async () => {
    const [attic] = await atticAndCellar();
    part = await busRepairPart(READ_BACK_MS).start(ctrl.ctx, ctrl.verbs);
    const jsm = await jetstreamManager(ctrl.ctx.nc);
    const cellarConsumer = await jsm.consumers.info(DECLARATION_STREAM, declarationConsumer('cellar'));
    const made = repairs('consumer_created');
    const refusedBefore = attic.refused.length;

    await jsm.consumers.delete(DECLARATION_STREAM, declarationConsumer('attic'));
    await eventually(async () => (repairs('consumer_created') > made ? true : undefined), 'the read-back to make attic\'s consumer again', 15_000);
    expect(await jsm.consumers.info(DECLARATION_STREAM, declarationConsumer('attic'))).toMatchObject({ config: { filter_subject: declarationSubject('attic') } });
    expect((await jsm.consumers.info(DECLARATION_STREAM, declarationConsumer('cellar'))).created).toBe(cellarConsumer.created);

    await nextDeclarationLands(attic);
    // The remade consumer started after what attic already held: nothing came twice to be refused.
    expect(attic.refused.slice(refusedBefore)).toEqual([]);
  }, 60_000);

  test('a node\'s consumer remade wrong by hand, reading every node\'s subject, is replaced by the read-back, and its next declaration lands', async () => {
    const [attic] = await atticAndCellar();
    part = await busRepairPart(READ_BACK_MS).start(ctrl.ctx, ctrl.verbs);
    const jsm = await jetstreamManager(ctrl.ctx.nc);
    const replaced = repairs('consumer_replaced');
    await jsm.consumers.delete(DECLARATION_STREAM, declarationConsumer('attic'));
    await jsm.consumers.add(DECLARATION_STREAM, { durable_name: declarationConsumer('attic'), filter_subject: 'mesh.declaration.*', ack_policy: AckPolicy.Explicit });

    await eventually(async () => (repairs('consumer_replaced') > replaced ? true : undefined), 'the read-back to replace attic\'s consumer', 15_000);
    expect((await jsm.consumers.info(DECLARATION_STREAM, declarationConsumer('attic'))).config.filter_subject).toBe(declarationSubject('attic'));
    await nextDeclarationLands(attic);
    expect(attic.taken.every((declaration) => declaration.node === 'attic')).toBe(true);
  }, 60_000);

  test('a controller starting again over a stream made again empty makes every consumer and declaration again at its first read-back', async () => {
    const [attic] = await atticAndCellar();
    const jsm = await jetstreamManager(ctrl.ctx.nc);
    // What a controller restart over a lost broker store meets: openController makes the stream
    // again, empty, and nothing makes the nodes' consumers.
    await jsm.streams.delete(DECLARATION_STREAM);
    await ensureDeclarationStream(ctrl.ctx.nc);
    const before = attic.held();

    // A read-back every hour: what is repaired here is the one at start.
    part = await busRepairPart(60 * 60_000).start(ctrl.ctx, ctrl.verbs);
    await eventually(async () => (attic.held() > before ? true : undefined), 'attic\'s host to take its declaration sent again', 20_000);
    const consumers: string[] = [];
    for await (const info of jsm.consumers.list(DECLARATION_STREAM)) consumers.push(info.name);
    expect(consumers.sort()).toEqual([declarationConsumer('attic'), declarationConsumer('cellar')]);
    await nextDeclarationLands(attic);
  }, 60_000);

  test('a node that refuses what its slot holds is sent its declaration again', async () => {
    const [attic] = await atticAndCellar();
    const resent = repairs('refusal_resent');
    const before = attic.held();
    // Something that is not a declaration lands in attic's slot.
    await jetstream(ctrl.ctx.nc).publish(declarationSubject('attic'), JSON.stringify({ payload: 'not a declaration', signature: 'none' }));
    await eventually(async () => (attic.refused.some((refusal) => refusal.reason === 'malformed') ? true : undefined), 'attic to refuse its slot');
    await eventually(async () => (attic.held() > before ? true : undefined), 'attic to take its declaration sent again', 15_000);
    expect(repairs('refusal_resent')).toBe(resent + 1);
  }, 60_000);

  test('a node that keeps refusing is sent its declaration again a bounded number of times, then held back and counted, never in a loop', async () => {
    // This host trusts another controller's key: it refuses everything, as foreign_key.
    const stubborn = await host('garret', { trust: generateSigningKeyPair().public_key });
    await eventually(async () => (repairs('refusal_resend_withheld') >= 1 ? true : undefined), 'a re-send to garret to be held back', 20_000);
    await ctrl.settled();
    const sent = await sentCount('garret');
    // The overlay at enrolment, then three re-sends (RESEND_BOUND), and no more.
    expect(sent).toBe(1 + 3);
    expect(stubborn.refused.every((refusal) => refusal.reason === 'foreign_key')).toBe(true);
    expect(stubborn.refused).toHaveLength(sent);
    expect(ctrl.logs.some((line) => line.startsWith('bus repair (refusal resend withheld): node garret: refused what its slot held (foreign_key) again'))).toBe(true);
    // Nothing more goes out once everything under way is done.
    await ctrl.settled();
    expect(await sentCount('garret')).toBe(sent);
  }, 60_000);

  test('a host whose heartbeat says it is deaf is named among the problems, and has its consumer made again without waiting for a read-back', async () => {
    const [attic] = await atticAndCellar();
    const jsm = await jetstreamManager(ctrl.ctx.nc);
    await jsm.consumers.delete(DECLARATION_STREAM, declarationConsumer('attic'));
    await eventually(async () => (attic.deaf() ? true : undefined), 'attic\'s host to find itself deaf');
    // Past the last assertion of attic's consumer, which a send a moment ago may have made.
    ctrl.advanceClock(ASSERTED_FOR_MS + 1);
    const made = repairs('consumer_created');

    await attic.heartbeat();
    await eventually(async () => (repairs('consumer_created') > made ? true : undefined), 'the heartbeat to have attic\'s consumer made again');
    const deafProblem = (await statusNow()).problems.find((problem) => problem.subject === 'attic' && problem.detail.startsWith('it cannot hear its declarations since'));
    expect(deafProblem?.detail).toContain('its consumer is gone from the broker');

    await eventually(async () => (!attic.deaf() ? true : undefined), 'attic\'s host to hear again');
    await attic.heartbeat();
    await eventually(async () => ((await statusNow()).problems.some((problem) => problem.subject === 'attic' && problem.detail.startsWith('it cannot hear')) ? undefined : true), 'the next heartbeat to clear it');
    await nextDeclarationLands(attic);
  }, 60_000);

  test('sends to many nodes assert their consumers from one listing, not a request each, and again only once the assertion is old', async () => {
    const [attic, cellar] = await atticAndCellar();
    const watcher = await ctrl.broker.connectAsController();
    try {
      const asked: string[] = [];
      watcher.subscribe(`$JS.API.CONSUMER.*.${DECLARATION_STREAM}.>`, { callback: (_error, message) => void asked.push(message.subject) });
      watcher.subscribe(`$JS.API.CONSUMER.LIST.${DECLARATION_STREAM}`, { callback: (_error, message) => void asked.push(message.subject) });
      await watcher.flush();
      const send = () => Promise.all([attic, cellar].map((made) => nodeWorkQueue(ctrl.ctx).run(made.node, () => sendCurrent(ctrl.ctx, made.node))));

      ctrl.advanceClock(ASSERTED_FOR_MS + 1);
      await send();
      await watcher.flush();
      await eventually(async () => (asked.length > 0 ? true : undefined), 'the listing to be seen');
      expect(asked).toEqual([`$JS.API.CONSUMER.LIST.${DECLARATION_STREAM}`]);

      // Within the assertion's lifetime, sends ask nothing more.
      await send();
      await ctrl.settled();
      await watcher.flush();
      expect(asked).toHaveLength(1);
    } finally {
      await watcher.close();
    }
  }, 60_000);
});
