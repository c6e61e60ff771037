import { jetstreamManager } from '@nats-io/jetstream';
import { headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { createHash } from 'node:crypto';
import type { Envelope } from '../../../schema/envelope';
import { brokerPasswordFor, envelopeDigest } from '../../shared/crypto';
import {
  DECLARATION_STREAM,
  NODE_JS_API_PREFIX,
  declarationConsumer,
  declarationSubject,
  enrolmentSubject,
  heartbeatSubject,
  nodeInboxPrefix,
  reportSubject,
} from '../../shared/bus/subjects';
import { CONDITION_HISTORY_BUCKET, CONDITIONS_BUCKET, openConditionBuckets, type ConditionBuckets } from '../conditions/condition-buckets';
import { CONTROLLER_EVENT_ROOT, conditionEventSubject } from '../conditions/condition-subjects';
import { useTestController, type TestMachine, type TestToken } from '../enrolment/testing/test-controller';
import { KvLease } from '../lease/kv-lease';
import { LEASE_BUCKET, LEASE_KEY, openLeaseBucket } from '../lease/lease-bucket';
import { eventually } from '../serve/testing/eventually';
import type { KvBucket } from '../serve/ensure-kv-bucket';
import { reportRefusalCounts, UNKNOWN_SENDER } from '../store/reports.repo';

// One enrolled machine turned attacker, with nothing but its own broker credentials, and a token
// holder with nothing but a token, against the broker configuration the controller writes and
// the controller's own responders, JetStream stream and lease. Each attack is made the way an
// attacker would make it: straight at the subject, and through the reply subject of a request
// someone with wider rights answers (JetStream's acks, pull statuses and consumer info; the
// enrolment responder's answer). After each, the bus is read back whole and must be as before.

const ATTACKER = 'mallory';
const VICTIM = 'victor';

/** Where an answer could do harm if it were published with its answerer's rights. */
const TARGETS = [
  declarationSubject(VICTIM),
  reportSubject(VICTIM),
  heartbeatSubject(VICTIM),
  reportSubject('invented-name'),
  `$JS.API.STREAM.PURGE.${DECLARATION_STREAM}`,
  `$JS.API.STREAM.DELETE.${DECLARATION_STREAM}`,
  `$JS.API.CONSUMER.DELETE.${DECLARATION_STREAM}.${declarationConsumer(VICTIM)}`,
  `$KV.${LEASE_BUCKET}.${LEASE_KEY}`,
  `$KV.${CONDITIONS_BUCKET}.heartbeat-silent.${VICTIM}`,
  `$KV.${CONDITIONS_BUCKET}.heartbeat-silent.${ATTACKER}`,
  `$KV.${CONDITION_HISTORY_BUCKET}.heartbeat-silent.${VICTIM}.000000000-00000000`,
  `$JS.API.STREAM.PURGE.KV_${CONDITIONS_BUCKET}`,
  `$JS.API.STREAM.DELETE.KV_${CONDITION_HISTORY_BUCKET}`,
  conditionEventSubject('condition-cleared'),
];

/** A condition about the victim, as the watchdog would keep it: what an attacker would like to clear or silence. */
const VICTIM_CONDITION = {
  id: `heartbeat-silent.${VICTIM}`, kind: 'heartbeat-silent', signal: 'S1', subject: VICTIM, severity: 'warning', state: 'open',
  detail: `node ${VICTIM} has sent no heartbeat`, show: `mesh-control nodes ${VICTIM}`, raised_at: '2026-11-02T10:00:00.000Z',
  changed_at: '2026-11-02T10:00:00.000Z', cleared_at: null, count: 1, epoch: 1, silence: null,
};

describe('an enrolled node and a token holder attacking the bus', () => {
  const t = useTestController('postgres');
  let attacker: NatsConnection;
  let attackerMachine: TestMachine;
  let victimMachine: TestMachine;
  let lease: KvLease;
  let bucket: KvBucket;
  let leaseRevision: number;
  let conditions: ConditionBuckets;

  beforeAll(async () => {
    victimMachine = t.machine(VICTIM);
    attackerMachine = t.machine(ATTACKER);
    for (const machine of [victimMachine, attackerMachine]) {
      const token = await t.issue();
      expect(await t.enrol(token, t.requestFor(machine, token))).toEqual({ ok: true, node: machine.hostname });
    }
    await t.settled();
    attacker = await t.connectNode(ATTACKER, attackerMachine);
    // The controller holds the lease, as a serving one does (an age limit no test outlasts).
    bucket = await openLeaseBucket(t.ctx.nc, { ttlMs: 600_000 });
    lease = new KvLease({ bucket, store: t.ctx.store, identity: { controller: 'bus-attacks:1', instance: 'a1b2c3d4e5f60718' }, timings: { ttlMs: 600_000, marginMs: 3_000 } });
    leaseRevision = (await lease.take(new AbortController().signal)).revision;
    conditions = await openConditionBuckets(t.ctx.nc);
    await conditions.conditions.kv.put(VICTIM_CONDITION.id, JSON.stringify(VICTIM_CONDITION));
    await conditions.history.kv.put(`${VICTIM_CONDITION.id}.000000000-00000001`, JSON.stringify({ ...VICTIM_CONDITION, event: 'condition-raised', at: VICTIM_CONDITION.raised_at, change: 'raised', why: null }));
  }, 60_000);

  /** Everything an attack could change: stream, every consumer, the victim's slot, the lease, the counts. */
  async function bus(): Promise<unknown> {
    const manager = await jetstreamManager(t.ctx.nc);
    const stream = await manager.streams.info(DECLARATION_STREAM).catch((error: unknown) => `stream gone: ${String(error)}`);
    const consumers: unknown[] = [];
    if (typeof stream !== 'string') {
      for await (const consumer of manager.consumers.list(DECLARATION_STREAM)) {
        consumers.push({ name: consumer.name, filter: consumer.config.filter_subject, ack: consumer.config.ack_policy, deliver: consumer.config.deliver_policy });
      }
    }
    const slot = await manager.streams.getMessage(DECLARATION_STREAM, { last_by_subj: declarationSubject(VICTIM) }).then(
      (message) => (message === null ? 'slot empty' : { seq: message.seq, sha256: createHash('sha256').update(message.data).digest('hex') }),
      (error: unknown) => `slot empty: ${String(error)}`,
    );
    const victimConsumer = await manager.consumers.info(DECLARATION_STREAM, declarationConsumer(VICTIM)).then(
      (info) => ({ pending: info.num_pending, delivered: info.delivered.stream_seq, acked: info.ack_floor.stream_seq }),
      (error: unknown) => `consumer gone: ${String(error)}`,
    );
    // A value JetStream wrote there (a status with headers) reads back as an error.
    const key = await bucket.kv.get(LEASE_KEY).catch((error: unknown) => `lease key unreadable: ${String(error)}`);
    const counts = (await reportRefusalCounts(t.ctx.store)).filter((row) => row.node !== ATTACKER).map((row) => `${row.node} ${row.reason} ${row.count}`);
    const kept = async (bucket: KvBucket): Promise<unknown> => {
      const entries: unknown[] = [];
      for await (const key of await bucket.kv.keys()) {
        const entry = await bucket.kv.get(key).catch((error: unknown) => `unreadable: ${String(error)}`);
        entries.push(entry === null || typeof entry === 'string' ? [key, entry] : [key, entry.revision, entry.operation, entry.string()]);
      }
      const info = await bucket.jsm.streams.info(bucket.stream).catch((error: unknown) => `stream gone: ${String(error)}`);
      return { entries: entries.sort(), messages: typeof info === 'string' ? info : info.state.messages };
    };
    return {
      conditions: await kept(conditions.conditions),
      conditionHistory: await kept(conditions.history),
      stream: typeof stream === 'string' ? stream : { messages: stream.state.messages, last_seq: stream.state.last_seq, subjects: stream.config.subjects },
      consumers: consumers.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      slot,
      victimConsumer,
      lease: key === null || typeof key === 'string' ? (key ?? 'no lease key') : { revision: key.revision, operation: key.operation, value: key.string() },
      counts,
    };
  }

  /**
   * Waits until the controller has taken in what the attacker sent: a JetStream round trip of its
   * own and then a malformed report of its own, counted against it, come after every attack on
   * its one connection. The last short pause lets any answer JetStream was publishing land.
   */
  async function afterTheAttack(): Promise<void> {
    await attacker.flush();
    await attacker.request(`${NODE_JS_API_PREFIX}.CONSUMER.INFO.${DECLARATION_STREAM}.${declarationConsumer(ATTACKER)}`, '', { timeout: 5000 }).catch(() => undefined);
    const own = async (): Promise<number> =>
      Number((await reportRefusalCounts(t.ctx.store)).find((row) => row.node === ATTACKER && String(row.reason) === 'malformed')?.count ?? 0);
    const before = await own();
    attacker.publish(reportSubject(ATTACKER), 'marker: every attack before this has been taken in');
    await eventually('the attacker\'s own marker report to be counted', async () => (await own()) > before, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
  }

  test('straight at the subjects: another node\'s slot, its consumer, the stream, the lease, another node\'s reports', async () => {
    const before = await bus();
    for (const subject of TARGETS) attacker.publish(subject, JSON.stringify({ attack: subject }));
    attacker.publish(`$JS.API.CONSUMER.CREATE.${DECLARATION_STREAM}`, JSON.stringify({ stream_name: DECLARATION_STREAM, config: { filter_subject: declarationSubject(VICTIM), ack_policy: 'none' } }));
    attacker.publish(`${NODE_JS_API_PREFIX}.STREAM.PURGE.${DECLARATION_STREAM}`, '{}');
    await afterTheAttack();
    expect(await bus()).toEqual(before);
  });

  test('through the reply subject of its acknowledgements, which JetStream confirms (and +NXT answers with the next message)', async () => {
    // Its own declaration, pulled by hand: the message's reply subject is its ack subject.
    const own = `${DECLARATION_STREAM}.${declarationConsumer(ATTACKER)}`;
    // (A pulled message arrives under its stream subject, so it is read on an inbox of its own.)
    const inbox = `${nodeInboxPrefix(ATTACKER)}.pulled`;
    const pulled = attacker.subscribe(inbox, { max: 1 });
    attacker.publish(`${NODE_JS_API_PREFIX}.CONSUMER.MSG.NEXT.${own}`, JSON.stringify({ batch: 1, expires: 4_000_000_000 }), { reply: inbox });
    let held: Msg | undefined;
    for await (const message of pulled) held = message;
    if (held === undefined) throw new Error('the attacker\'s own declaration was not delivered');
    expect(held.reply).toMatch(new RegExp(`^\\$JS\\.ACK\\.${own}\\.`));
    const before = await bus();
    for (const target of TARGETS) {
      attacker.publish(held.reply ?? '', '+WPI', { reply: target });
      attacker.publish(held.reply ?? '', '+NXT', { reply: target });
    }
    await afterTheAttack();
    expect(await bus()).toEqual(before);
  });

  test('through the reply subject of its own pulls and consumer info, which JetStream answers', async () => {
    const before = await bus();
    const own = `${DECLARATION_STREAM}.${declarationConsumer(ATTACKER)}`;
    for (const target of TARGETS) {
      attacker.publish(`${NODE_JS_API_PREFIX}.CONSUMER.MSG.NEXT.${own}`, JSON.stringify({ batch: 1, no_wait: true }), { reply: target });
      attacker.publish(`${NODE_JS_API_PREFIX}.CONSUMER.MSG.NEXT.${own}`, JSON.stringify({ batch: 1, expires: 200_000_000 }), { reply: target });
      attacker.publish(`${NODE_JS_API_PREFIX}.CONSUMER.INFO.${own}`, '', { reply: target });
    }
    await afterTheAttack();
    expect(await bus()).toEqual(before);
  });

  test('through the reply subject of its own reports and heartbeats, which cross to the controller\'s account', async () => {
    const before = await bus();
    for (const target of TARGETS) {
      attacker.publish(reportSubject(ATTACKER), '{"not":"a report"}', { reply: target });
      attacker.publish(heartbeatSubject(ATTACKER), '{"not":"a heartbeat"}', { reply: target });
    }
    await afterTheAttack();
    expect(await bus()).toEqual(before);
  });

  test('cannot read the conditions, their history or the controller\'s events, whether it subscribes or asks JetStream', async () => {
    const heard: string[] = [];
    const listen = (subject: string): void => {
      try {
        attacker.subscribe(subject, {
          callback: (error, message) => {
            if (error === null) heard.push(`${subject}: ${message.subject}`);
          },
        });
      } catch {
        // Refused at once: nothing to hear.
      }
    };
    for (const subject of [`${CONTROLLER_EVENT_ROOT}.>`, `$KV.${CONDITIONS_BUCKET}.>`, `$KV.${CONDITION_HISTORY_BUCKET}.>`, '>']) listen(subject);
    const asked: string[] = [];
    for (const subject of [
      `${NODE_JS_API_PREFIX}.DIRECT.GET.KV_${CONDITIONS_BUCKET}.$KV.${CONDITIONS_BUCKET}.${VICTIM_CONDITION.id}`,
      `${NODE_JS_API_PREFIX}.STREAM.MSG.GET.KV_${CONDITIONS_BUCKET}`,
      `${NODE_JS_API_PREFIX}.CONSUMER.CREATE.KV_${CONDITION_HISTORY_BUCKET}`,
      `$JS.API.DIRECT.GET.KV_${CONDITIONS_BUCKET}.$KV.${CONDITIONS_BUCKET}.${VICTIM_CONDITION.id}`,
      `$JS.API.STREAM.MSG.GET.KV_${CONDITIONS_BUCKET}`,
    ]) {
      const answer = await attacker.request(subject, JSON.stringify({ last_by_subj: `$KV.${CONDITIONS_BUCKET}.${VICTIM_CONDITION.id}` }), { timeout: 1_500 }).then(
        (message) => message.string(),
        () => null,
      );
      if (answer !== null && answer.includes(VICTIM)) asked.push(`${subject}: ${answer}`);
    }
    // The controller says an event and changes the condition while the attacker listens.
    t.ctx.nc.publish(conditionEventSubject('condition-changed'), JSON.stringify({ ...VICTIM_CONDITION, event: 'condition-changed' }));
    await conditions.conditions.kv.put(VICTIM_CONDITION.id, JSON.stringify(VICTIM_CONDITION));
    await t.ctx.nc.flush();
    await afterTheAttack();
    expect(heard).toEqual([]);
    expect(asked).toEqual([]);
  });

  test('the controller still holds its lease after all of it: the key is its own and renews at its revision', async () => {
    const current = await lease.current();
    expect(current?.holder?.instance).toBe('a1b2c3d4e5f60718');
    expect(current?.revision).toBe(leaseRevision);
    leaseRevision = (await lease.renew(leaseRevision)).revision;
  });

  test('and the victim reads the very declaration that was waiting for it', async () => {
    const slot = await (await jetstreamManager(t.ctx.nc)).streams.getMessage(DECLARATION_STREAM, { last_by_subj: declarationSubject(VICTIM) });
    const victim = await t.connectNode(VICTIM, victimMachine);
    const read = await t.nextDeclaration(victim, VICTIM);
    expect(read.declaration.node).toBe(VICTIM);
    expect(read.digest).toBe(envelopeDigest((slot as NonNullable<typeof slot>).json<Envelope>()));
    await victim.close();
  });

  describe('a token holder', () => {
    let token: TestToken;
    let enrolling: NatsConnection;
    const refusalsOf = (id: string): string[] => t.logs.filter((line) => line.includes(`a request with token ${id}`) && line.includes('bad requests on this token'));

    beforeAll(async () => {
      token = await t.issue();
      enrolling = await t.broker.connectAsEnrolment(token.token_id, brokerPasswordFor(token.secret, token.token_id), { reconnect: false });
    });

    test('aims a malformed request\'s answer at another node\'s slot and at a stream purge: nothing lands, and each counts against the token', async () => {
      const before = await bus();
      attacker.publish(reportSubject(ATTACKER), 'keeps the attacker\'s own count moving');
      for (const target of [declarationSubject(VICTIM), `$JS.API.STREAM.PURGE.${DECLARATION_STREAM}`]) {
        enrolling.publish(enrolmentSubject(token.token_id), '{"not":"an enrolment"}', { reply: target });
      }
      await enrolling.flush();
      await eventually('both malformed requests to be counted against the token', () => refusalsOf(token.token_id).length >= 2, { timeoutMs: 10_000 });
      await afterTheAttack();
      expect(await bus()).toEqual(before);
    });

    test('cannot pass itself off as a controller: the broker stamps who really sent the request', async () => {
      const forged = headers();
      forged.set('Nats-Request-Info', JSON.stringify({ acc: 'MESH', user: 'controller' }));
      const answer = await enrolling.request(enrolmentSubject(token.token_id), 'not json either', { timeout: 5000, headers: forged });
      expect(answer.json()).toMatchObject({ ok: false, refusal: 'malformed' });
      await eventually('the third bad request to be logged', () => refusalsOf(token.token_id).length >= 3, { timeoutMs: 10_000 });
      const line = refusalsOf(token.token_id)[2] ?? '';
      expect(line).toContain(`from user enrol-${token.token_id} of account ENROL`);
      expect(line).not.toContain('account MESH');
    });

    test('spends its token with a few more, and then cannot even connect to try the real request', async () => {
      for (let index = 0; index < 2; index += 1) {
        await enrolling.request(enrolmentSubject(token.token_id), '[]', { timeout: 5000 }).catch(() => undefined);
      }
      await eventually('the token to be spent', () => t.logs.some((line) => line.includes(`token ${token.token_id} is spent after 5 bad requests`)), { timeoutMs: 10_000 });
      await t.retired(token);
      await expect(t.enrol(token, t.requestFor(t.machine('latecomer'), token))).rejects.toThrow(/Authorization/i);
      const [row] = await t.ctx.store.query<{ malformed_requests: number; spent: boolean }>('SELECT malformed_requests, expires_at <= $2 AS spent FROM tokens WHERE id = $1', [token.token_id, t.ctx.now()]);
      expect(row).toEqual({ malformed_requests: 5, spent: true });
    });
  });

  test('nothing the attacks named was counted against the victim or under the invented name', async () => {
    const counts = await reportRefusalCounts(t.ctx.store);
    expect(counts.filter((row) => row.node === VICTIM || row.node === 'invented-name')).toEqual([]);
    expect(counts.filter((row) => row.node === UNKNOWN_SENDER)).toEqual([]);
  });
});
