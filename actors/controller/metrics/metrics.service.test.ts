import net from 'node:net';
import { Counter, Registry } from 'prom-client';
import { freePort } from '../../shared/testing/free-port';
import { MetricsListenFailed } from './metrics-errors';
import { metricsService } from './metrics.service';

function registryCounting(): { registry: Registry; counter: Counter } {
  const registry = new Registry();
  return { registry, counter: new Counter({ name: 'probe_total', help: 'A count the test moves', registers: [registry] }) };
}

describe('the metrics child', () => {
  test('answers GET /metrics with what the registry holds at that moment, and nothing else', async () => {
    const port = await freePort();
    const { registry, counter } = registryCounting();
    const lines: string[] = [];
    const running = await metricsService({ host: '127.0.0.1', port }, registry, (line) => lines.push(line)).start(new AbortController().signal);
    try {
      const url = `http://127.0.0.1:${port}`;
      const first = await fetch(`${url}/metrics`);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await first.text()).toMatch(/^probe_total 0$/m);
      counter.inc(3);
      expect(await (await fetch(`${url}/metrics?x=1`)).text()).toMatch(/^probe_total 3$/m);
      expect((await fetch(`${url}/`)).status).toBe(404);
      expect((await fetch(`${url}/metrics/../admin`)).status).toBe(404);
      expect((await fetch(`${url}/metrics`, { method: 'POST', body: 'x' })).status).toBe(405);
      expect(lines).toEqual([`metrics: serving http://127.0.0.1:${port}/metrics`]);
    } finally {
      await running.stop();
    }
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  test('fails to start on a port already taken, naming the address and what to do', async () => {
    const port = await freePort();
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const starting = metricsService({ host: '127.0.0.1', port }, new Registry(), () => undefined).start(new AbortController().signal);
      await expect(starting).rejects.toThrow(MetricsListenFailed);
      await expect(starting).rejects.toThrow(`the metrics endpoint could not listen (the port is in use): "127.0.0.1:${port}"`);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  test('a scrape whose registry fails is answered 500 and logged as a warning, and the next one works', async () => {
    const port = await freePort();
    const registry = new Registry();
    let broken = true;
    new Counter({
      name: 'fragile_total', help: 'Fails while broken', registers: [registry],
      collect() {
        if (broken) throw new Error('the count could not be read');
      },
    });
    const logged: Array<{ line: string; level: string | undefined }> = [];
    const running = await metricsService({ host: '127.0.0.1', port }, registry, (line, fields) => logged.push({ line, level: fields?.level })).start(new AbortController().signal);
    try {
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(500);
      expect(logged).toContainEqual({ line: 'metrics: a scrape failed: the count could not be read', level: 'warn' });
      broken = false;
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    } finally {
      await running.stop();
    }
  });
});
