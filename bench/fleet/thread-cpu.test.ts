import { Worker } from 'node:worker_threads';
import { mainThreadCpuSeconds } from './thread-cpu';

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* busy */ }
}

describe('the main thread\'s CPU time', () => {
  test('grows by the time the main thread computes', () => {
    const before = mainThreadCpuSeconds();
    spin(200);
    expect(mainThreadCpuSeconds() - before).toBeGreaterThanOrEqual(0.1);
  });

  test('does not count another thread\'s computing while the main thread waits', async () => {
    const before = mainThreadCpuSeconds();
    const worker = new Worker('const until = performance.now() + 300; while (performance.now() < until) {}', { eval: true });
    await new Promise((resolve) => worker.once('exit', resolve));
    expect(mainThreadCpuSeconds() - before).toBeLessThan(0.15);
  });
});
