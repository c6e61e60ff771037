import { useTestController } from '../enrolment/testing/test-controller';
import { busObjects } from '../declarations/bus-objects';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { sendComposed } from '../declarations/send-declaration';
import { isPassingSendFailure } from './send-failure';

// Seeds 9 and 10 of the cluster chaos test: a nats-server died as a revision went out, and the
// JetStream answers to the controller's requests never came. Here the one real nats-server is
// stopped with SIGSTOP (it keeps its sockets, answers nothing) while a node is sent a
// declaration: the send must end, say the bus failed it (so the plan tries it again), and leave
// no record of a generation that never reached the stream.

describe('a send whose broker stops answering', () => {
  const t = useTestController('postgres');
  let stoppedPid: number | undefined;

  beforeAll(async () => {
    const token = await t.issue();
    await t.enrol(token, t.requestFor(t.machine('kilo'), token));
  });

  afterAll(() => {
    // Never leave the broker stopped, whatever failed: its stop in afterAll would wait on it.
    if (stoppedPid !== undefined) process.kill(stoppedPid, 'SIGCONT');
  });

  test('ends as a failure the bus caused, takes its record back, and goes out once the broker answers again', async () => {
    const pid = t.broker.broker.pid;
    const generations = async (): Promise<number[]> =>
      (await t.ctx.store.query<{ generation: number }>('SELECT generation FROM declarations WHERE node = $1 ORDER BY generation', ['kilo'])).map((row) => Number(row.generation));
    const before = await generations();
    // Asserted a moment ago by the enrolment's send: forgotten, so this send asks the broker too.
    busObjects(t.ctx).forgetStream();
    busObjects(t.ctx).forget('kilo');

    process.kill(pid, 'SIGSTOP');
    stoppedPid = pid;
    const failure = await nodeWorkQueue(t.ctx)
      .run('kilo', () => sendComposed(t.ctx, 'kilo', { kind: 'full', resources: [] }))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    process.kill(pid, 'SIGCONT');
    stoppedPid = undefined;

    expect(failure).toBeInstanceOf(Error);
    expect(isPassingSendFailure(failure)).toBe(true);
    expect(await generations()).toEqual(before);
    expect(t.logs.some((line) => /could not assert the declaration stream and node kilo's consumer/.test(line))).toBe(true);

    const sent = await nodeWorkQueue(t.ctx).run('kilo', () => sendComposed(t.ctx, 'kilo', { kind: 'full', resources: [] }));
    expect(await generations()).toEqual([...before, sent.generation]);
  }, 120_000);

  test('a declaration refused as composed is not a failure the bus caused', () => {
    expect(isPassingSendFailure(new Error('the declaration names file:/srv/m/version twice'))).toBe(false);
  });
});
