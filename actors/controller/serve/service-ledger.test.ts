import { ServiceLedger, type RunningService } from './service-ledger';

/** A service's running incarnation that records its stop, and can be made to fail. */
function incarnation(name: string, stops: string[], options: { stopMs?: number } = {}) {
  let fail: (error: Error) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => undefined);
  const running: RunningService = {
    failed,
    stop: async () => {
      await new Promise((resolve) => setTimeout(resolve, options.stopMs ?? 0));
      stops.push(name);
    },
  };
  return { running, fail };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ServiceLedger', () => {
  test('a killed service is stopped first, then its run fails with the reason', async () => {
    const ledger = new ServiceLedger();
    const stops: string[] = [];
    const run = ledger.run('reports', incarnation('reports', stops, { stopMs: 20 }).running, new AbortController().signal);
    const outcome = run.then(() => 'ran on', (error: Error) => `failed: ${error.message}, stopped: ${stops.join(',')}`);
    expect(ledger.kill('reports', 'killed by a test')).toBe(true);
    expect(await outcome).toBe('failed: killed by a test, stopped: reports');
    expect(ledger.kill('reports', 'again')).toBe(false);
    expect(ledger.kill('nobody', 'x')).toBe(false);
  });

  test('a service that fails by itself is stopped and its run fails with its error; the failure and the restart are told', async () => {
    const told: string[] = [];
    const ledger = new ServiceLedger({ onChange: (what) => told.push(what) });
    const stops: string[] = [];
    const service = incarnation('bus', stops);
    const run = ledger.run('bus', service.running, new AbortController().signal).catch((error: Error) => error.message);
    service.fail(new Error('the connection closed'));
    expect(await run).toBe('the connection closed');
    expect(stops).toEqual(['bus']);
    void ledger.run('bus', incarnation('bus', stops).running, new AbortController().signal).catch(() => undefined);
    expect(told).toEqual(['bus failed', 'bus runs again']);
  });

  test('a service whose child was stopped is stopped, and its run never settles', async () => {
    const ledger = new ServiceLedger();
    const stops: string[] = [];
    const stopped = new AbortController();
    let settled = false;
    void ledger.run('status', incarnation('status', stops).running, stopped.signal).finally(() => {
      settled = true;
    });
    stopped.abort();
    await ledger.settled();
    await settle();
    expect(stops).toEqual(['status']);
    expect(settled).toBe(false);
  });

  test('stops services in the order asked, each once, and a restart waits for the previous stop', async () => {
    const ledger = new ServiceLedger();
    const stops: string[] = [];
    for (const id of ['reports', 'status', 'control']) void ledger.run(id, incarnation(id, stops, { stopMs: id === 'status' ? 30 : 0 }).running, new AbortController().signal).catch(() => undefined);
    expect(ledger.runningIds().sort()).toEqual(['control', 'reports', 'status']);
    await ledger.stopInOrder(['control', 'status', 'reports', 'unknown'], () => undefined);
    expect(stops).toEqual(['control', 'status', 'reports']);
    await ledger.stopInOrder(['control'], () => undefined);
    expect(stops).toEqual(['control', 'status', 'reports']);
    await ledger.previousStopped('status');
    expect(ledger.runningIds()).toEqual([]);
  });

  test('says when each service first started', async () => {
    const ledger = new ServiceLedger();
    const seen: string[] = [];
    const all = ledger.allStarted(['reports', 'enrolment']).then(() => seen.push('both'));
    void ledger.run('reports', incarnation('reports', []).running, new AbortController().signal).catch(() => undefined);
    await settle();
    expect(seen).toEqual([]);
    void ledger.run('enrolment', incarnation('enrolment', []).running, new AbortController().signal).catch(() => undefined);
    await all;
    expect(seen).toEqual(['both']);
  });
});

test('waits, when settling, for a start that is still under way', async () => {
  const ledger = new ServiceLedger();
  const order: string[] = [];
  void ledger.starting(new Promise((resolve) => setTimeout(resolve, 30)).then(() => order.push('started')));
  await ledger.settled();
  order.push('settled');
  expect(order).toEqual(['started', 'settled']);
});

test('stops waiting for services to start once the waiter is stopped', async () => {
  const ledger = new ServiceLedger();
  const stopped = new AbortController();
  const waiting = ledger.allStarted(['never'], stopped.signal).then(() => 'started', () => 'gave up');
  stopped.abort();
  expect(await waiting).toBe('gave up');
});
