import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { startTestBroker, type TestBroker } from '../../tests/broker/test-broker';
import { ensureDeclarationStream } from '../../actors/controller/serve/ensure-declaration-stream';
import { DECLARATION_STREAM, declarationSubject } from '../../actors/shared/bus/subjects';
import { publishDeclaration } from './publish-declaration';

// The 10,000-node push died on the client's 5 s wait for a publish's acknowledgement; these pin
// what the bench does instead, against a real nats-server.

let broker: TestBroker;
let controller: NatsConnection;

beforeAll(async () => {
  broker = await startTestBroker({ dirPrefix: 'mesh publish-declaration' });
  controller = await broker.connectAsController();
});

afterAll(async () => {
  await controller?.close();
  await broker?.stop();
});

/** A stand-in for the stream on one subject: answers a publish with an acknowledgement only from its `from`th copy on. */
function slowStream(node: string, from: number): { copies: Msg[] } {
  const copies: Msg[] = [];
  controller.subscribe(declarationSubject(node), {
    callback: (_error, message) => {
      copies.push(message);
      if (copies.length >= from) message.respond(JSON.stringify({ stream: DECLARATION_STREAM, seq: copies.length }));
    },
  });
  return { copies };
}

describe('publishing a declaration in the fleet bench', () => {
  test('sends again with the same message id when the acknowledgement does not come in time', async () => {
    const stream = slowStream('late', 2);
    const published = await publishDeclaration(jetstream(controller), 'late', '{}', 'late:1', { ackWaitMs: 300, tries: 3, settleMs: 0 });
    expect(published).toEqual({ ok: true, retries: 1 });
    expect(stream.copies.map((copy) => copy.headers?.get('Nats-Msg-Id'))).toEqual(['late:1', 'late:1']);
  });

  test('says it was not acknowledged after its last try, rather than throwing', async () => {
    const stream = slowStream('silent', Number.POSITIVE_INFINITY);
    const published = await publishDeclaration(jetstream(controller), 'silent', '{}', 'silent:1', { ackWaitMs: 200, tries: 3, settleMs: 0 });
    expect(published).toEqual({ ok: false, retries: 2 });
    expect(stream.copies).toHaveLength(3);
  });

  test('a refusal that passes (nobody answering for the stream yet) is sent again after a wait', async () => {
    // No stream yet and nothing reads the subject: the broker says at once that nobody answers,
    // as a cluster does while it elects the stream's leader. The stand-in comes 300 ms later.
    let stream: { copies: Msg[] } | undefined;
    setTimeout(() => { stream = slowStream('electing', 1); }, 300);
    const published = await publishDeclaration(jetstream(controller), 'electing', '{}', 'electing:1', { ackWaitMs: 5000, tries: 3, settleMs: 10_000 });
    expect(published.ok).toBe(true);
    expect(published.retries).toBeGreaterThan(0);
    expect(stream?.copies).toHaveLength(1);
  });

  test('a passing refusal that outlasts its settling time reaches the caller', async () => {
    await expect(publishDeclaration(jetstream(controller), 'nobody', '{}', 'nobody:1', { ackWaitMs: 5000, tries: 3, settleMs: 500 }))
      .rejects.toThrow();
  });

  test('an answer that is no acknowledgement reaches the caller at once, sent once', async () => {
    const copies: Msg[] = [];
    controller.subscribe(declarationSubject('garbled'), { callback: (_error, message) => { copies.push(message); message.respond('not an acknowledgement'); } });
    await expect(publishDeclaration(jetstream(controller), 'garbled', '{}', 'garbled:1', { ackWaitMs: 5000, tries: 3, settleMs: 10_000 }))
      .rejects.toThrow();
    expect(copies).toHaveLength(1);
  });

  test('a declaration sent again is kept once by the real stream', async () => {
    await ensureDeclarationStream(controller);
    const js = jetstream(controller);
    expect(await publishDeclaration(js, 'once', '{"n":1}', 'once:1')).toEqual({ ok: true, retries: 0 });
    expect(await publishDeclaration(js, 'once', '{"n":1}', 'once:1')).toEqual({ ok: true, retries: 0 });
    const info = await (await jetstreamManager(controller)).streams.info(DECLARATION_STREAM, { subjects_filter: declarationSubject('once') });
    expect(info.state.subjects?.[declarationSubject('once')]).toBe(1);
    const last = await (await jetstreamManager(controller)).streams.getMessage(DECLARATION_STREAM, { last_by_subj: declarationSubject('once') });
    expect(last?.seq).toBe(info.state.last_seq);
  });

});
