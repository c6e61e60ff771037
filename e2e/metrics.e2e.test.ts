import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../actors/shared/testing/free-port';
import { startTestPostgres, type TestPostgres } from '../actors/shared/testing/test-postgres';
import { MeshRig, REPO_DIR } from './mesh-rig';
import { done, notYet, until } from './until';

// The controller's metrics and log as an operator meets them: `mesh-control serve
// --metrics-listen … --log-format json` as its own process over a real broker and PostgreSQL,
// one real `nox-mesh-host run` enrolled and declared a file, and the endpoint scraped over HTTP
// the way Prometheus scrapes it.

/** One sample's value from Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`).sort().join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    if ((match[2] ?? '').split(',').filter((pair) => pair !== '').sort().join(',') === wanted) return Number(match[3]);
  }
  return undefined;
}

describe('the controller\'s metrics and JSON log, from a real serve', () => {
  let parent: string;
  let postgres: TestPostgres | undefined;
  let rig: MeshRig;
  let url: string;

  const scrape = async (): Promise<string> => {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    return response.text();
  };

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-metrics-'));
    postgres = await startTestPostgres();
    const port = await freePort();
    url = `http://127.0.0.1:${port}/metrics`;
    rig = new MeshRig({ dir: parent, hosts: ['a'], database: postgres.url, serveArgs: ['--metrics-listen', `127.0.0.1:${port}`, '--log-format', 'json'] });
    await rig.start();
  }, 90_000);

  afterAll(async () => {
    await rig?.stop();
    await postgres?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  test('before any node, the endpoint shows the lease held and every count at zero', async () => {
    const text = await scrape();
    expect(sample(text, 'mesh_controller_lease_acting')).toBe(1);
    expect(sample(text, 'mesh_controller_lease_epoch')).toBeGreaterThan(0);
    expect(sample(text, 'mesh_controller_nodes', { state: 'enrolled' })).toBe(0);
    expect(sample(text, 'mesh_controller_plans', { state: 'sending' })).toBe(0);
    expect(sample(text, 'mesh_controller_conditions_open', { kind: 'heartbeat-silent' })).toBe(0);
    expect(sample(text, 'mesh_controller_condition_reads_failed_total')).toBe(0);
    expect(sample(text, 'mesh_controller_declarations_sent_total', { kind: 'full' })).toBe(0);
    expect(sample(text, 'mesh_controller_reports_total')).toBe(0);
    expect(sample(text, 'mesh_controller_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toMatch(/^# TYPE mesh_controller_reports_total counter$/m);
  });

  test('a node enrolled and declared a file shows up: nodes enrolled, declarations sent, reports kept', async () => {
    const issued = await rig.issueToken({ new: true });
    await rig.enrol('a', issued.token);
    const file = path.join(parent, 'declare-a.json');
    await fs.writeFile(file, JSON.stringify({ resources: [{ shape: 'file', path: '/srv/metrics-probe', content: { text: 'scraped\n' } }] }));
    expect((await rig.declare('a', file)).stdout).toMatch(/node a: 1 resource\(s\) declared/);
    await until('machine a to hold the declared file', async () => {
      const held = await fs.readFile(path.join(rig.hostRoot('a'), 'srv', 'metrics-probe'), 'utf8').catch(() => undefined);
      return held === 'scraped\n' ? done(held) : notYet(String(held));
    }, { timeoutMs: 30_000 });
    // The report of the full declaration arrives after the file is written: wait for it on the endpoint.
    const text = await until('the endpoint to count the node, the sends and the reports', async () => {
      const seen = await scrape();
      const moved = sample(seen, 'mesh_controller_nodes', { state: 'enrolled' }) === 1
        && (sample(seen, 'mesh_controller_declarations_sent_total', { kind: 'overlay' }) ?? 0) >= 1
        && (sample(seen, 'mesh_controller_declarations_sent_total', { kind: 'full' }) ?? 0) >= 1
        && (sample(seen, 'mesh_controller_reports_total') ?? 0) >= 2;
      return moved ? done(seen) : notYet(seen.split('\n').filter((line) => /^mesh_controller_(nodes|declarations|reports)/.test(line)).join('\n'));
    }, { timeoutMs: 30_000, intervalMs: 250 });
    expect(sample(text, 'mesh_controller_declarations_refused_total', { reason: 'bad_signature' })).toBeUndefined();
    expect(sample(text, 'mesh_controller_lease_acting')).toBe(1);
  }, 90_000);

  test('the lease renewals are counted as they happen', async () => {
    // Renewed every 5 s; the first may already have been counted.
    await until('a renewal to be counted', async () => {
      const seen = await scrape();
      return (sample(seen, 'mesh_controller_lease_renewals_total', { outcome: 'renewed' }) ?? 0) >= 1 ? done(seen) : notYet(seen);
    }, { timeoutMs: 20_000, intervalMs: 500 });
  }, 30_000);

  test('every line serve wrote is one JSON object with level, time and msg, the events\' fields beside', () => {
    const lines = (rig.serve?.output() ?? '').split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(3);
    const entries = lines.map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`serve wrote a line that is not JSON: ${line}`);
      }
    });
    for (const entry of entries) {
      expect(['debug', 'info', 'warn', 'error']).toContain(entry.level);
      expect(new Date(entry.time as string).toISOString()).toBe(entry.time);
      expect(typeof entry.msg).toBe('string');
    }
    expect(entries).toContainEqual(expect.objectContaining({ level: 'info', msg: expect.stringMatching(/^serving: epoch \d+/), epoch: expect.any(Number) }));
    expect(entries).toContainEqual(expect.objectContaining({ msg: expect.stringMatching(/^metrics: serving http:\/\/127\.0\.0\.1:\d+\/metrics$/) }));
    expect(entries).toContainEqual(expect.objectContaining({ msg: expect.stringMatching(/^sent node a its full declaration/), node: 'a', kind: 'full', generation: expect.any(Number) }));
  });

  test('a standby answers on its own port: the same mesh from the store, and not acting', async () => {
    const port = await freePort();
    const standby = spawn(process.execPath, [path.join(REPO_DIR, 'bin', 'mesh-control'), 'serve', '--dir', rig.meshDir, '--metrics-listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    standby.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => standby.once('close', resolve));
    try {
      await until('the standby to stand by and serve its metrics', () => (/lease: standing by/.test(stderr) && /metrics: serving/.test(stderr) ? done(true) : notYet(stderr)), { timeoutMs: 30_000, intervalMs: 200 });
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(sample(text, 'mesh_controller_lease_acting')).toBe(0);
      expect(sample(text, 'mesh_controller_lease_epoch')).toBe(0);
      expect(sample(text, 'mesh_controller_nodes', { state: 'enrolled' })).toBe(1);
      expect(sample(text, 'mesh_controller_declarations_sent_total', { kind: 'full' })).toBe(0);
    } finally {
      standby.kill('SIGTERM');
      expect(await closed).toBe(0);
    }
    expect(sample(await scrape(), 'mesh_controller_lease_acting')).toBe(1);
  }, 60_000);

  test('a second serve given the same metrics port gives up naming the metrics child and the port, and the first goes on serving', async () => {
    const port = new URL(url).port;
    const second = spawn(process.execPath, [path.join(REPO_DIR, 'bin', 'mesh-control'), 'serve', '--dir', rig.meshDir, '--metrics-listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    second.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => second.once('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`\\nerror: supervisor "controller" gave up on child "metrics" after more than 3 restarts in 60000 ms; last error: "the metrics endpoint could not listen \\(the port is in use\\): \\\\"127\\.0\\.0\\.1:${port}\\\\""`));
    expect(rig.serve?.running).toBe(true);
    expect(sample(await scrape(), 'mesh_controller_lease_acting')).toBe(1);
  }, 60_000);

  test('a second serve asked to listen off this machine is refused before it opens anything', () => {
    const run = spawnSync(process.execPath, [path.join(REPO_DIR, 'bin', 'mesh-control'), 'serve', '--dir', rig.meshDir, '--metrics-listen', '0.0.0.0:9464'], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('error: --metrics-listen names an address other machines may reach, and the metrics answer anyone who asks: "0.0.0.0:9464"\n'
      + 'next:  listen on 127.0.0.1 (or [::1]) and let the scraper reach it there, or add --metrics-allow-remote if other machines are meant to scrape it (put a firewall in front)\n');
    expect(rig.serve?.running).toBe(true);
  });
});
