import { NodeWorkQueue } from './node-work-queue';

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('the per-node work queue', () => {
  test('runs one node\'s work one at a time, in the order asked', async () => {
    const queue = new NodeWorkQueue();
    const order: string[] = [];
    const gate = deferred();
    const first = queue.run('alpha', async () => {
      await gate.promise;
      order.push('first');
    });
    const second = queue.run('alpha', async () => {
      order.push('second');
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    gate.resolve();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
  });

  test('lets different nodes\' work run side by side', async () => {
    const queue = new NodeWorkQueue();
    const gate = deferred();
    const held = queue.run('alpha', () => gate.promise);
    await expect(queue.run('beta', async () => 'beta done')).resolves.toBe('beta done');
    gate.resolve();
    await held;
  });

  test('goes on after a failed work, and passes the failure to its caller', async () => {
    const queue = new NodeWorkQueue();
    const failed = queue.run('alpha', async () => {
      throw new Error('broker away');
    });
    const next = queue.run('alpha', async () => 'still runs');
    await expect(failed).rejects.toThrow('broker away');
    await expect(next).resolves.toBe('still runs');
    await queue.idle();
  });
});
