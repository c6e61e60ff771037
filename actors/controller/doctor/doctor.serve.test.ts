import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { ControllerStatus } from '../../../schema/controller-status';
import { Declaration } from '../../../schema/declaration';
import { emptyHostState } from '../../../schema/host-state';
import { parseContract } from '../../../schema/parse';
import { SHAPES_FOR_HOST_KIND } from '../../../schema/resource';
import { admitDeclaration } from '../../host/link/admit-declaration';
import { enrolledState } from '../../host/enrolment/enrolled-state';
import { DEFAULT_SETTINGS } from '../../host/host-context';
import { sealEnvelope } from '../../shared/crypto/envelope';
import { composeFull } from '../declarations/compose-full';
import type { DoctorReport, ProbeResult } from '../../../schema/doctor';
import type { Profile } from '../../../schema/profile';
import type { HostKind } from '../../../schema/resource';
import { DECLARATION_STREAM, declarationConsumer } from '../../shared/bus/subjects';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { freePort } from '../../shared/testing/free-port';
import { DoctorCommand } from '../cli/doctor.command';
import { runCommand } from '../cli/testing/run-command';
import { callController } from '../control/call-controller';
import { readBackDeclarations } from '../declarations/read-back-declarations';
import { firstFreeAddress, overlayPool } from '../enrolment/overlay-pool';
import { serveController, type ServingController } from '../serve/serve-controller';
import { eventually } from '../serve/testing/eventually';
import { useTestMesh } from '../serve/testing/use-test-mesh';
import { upsertNode } from '../store/nodes.repo';
import { PostgresStore } from '../store/postgres-store';
import type { Sql } from '../store/sql-store';
import { askDoctor } from './ask-doctor';
import type { DoctorProbe } from './doctor-probe';

// The doctor over a real TLS broker and a real PostgreSQL, broken the way a careless operator
// breaks a mesh: the controller not started, a migration row deleted, mesh.json pointing at a
// database that is not there, a node's consumer deleted by hand, a phone declared a package.

const suite = useTestMesh();
const WAIT = { timeoutMs: 30_000 };
const BOUND_MS = 8_000;

function profileOf(name: string, kind: HostKind): Profile {
  return {
    os: { id: kind === 'episodic' ? 'android' : 'alpine' },
    arch: 'aarch64',
    kernel: '6.6.0',
    init: kind === 'episodic' ? 'none' : 'openrc',
    package_manager: kind === 'episodic' ? 'none' : 'apk',
    container_runtime: 'none',
    graphical_session: false,
    host_kind: kind,
    hostname: name,
  };
}

/** A node as enrolment leaves it: keys, profile, an overlay address. */
async function enrolled(store: Sql, cidr: string, name: string, kind: HostKind): Promise<void> {
  const identity = generateNodeIdentity();
  const now = new Date();
  await upsertNode(store, { name, lifecycle_state: 'enrolled', public_key: identity.public_key, nkey: identity.nkey_public, profile: profileOf(name, kind), enrolled_at: now }, now);
  const taken = (await store.query<{ overlay_address: string }>('SELECT overlay_address FROM nodes WHERE overlay_address IS NOT NULL')).map((row) => row.overlay_address);
  await store.query('UPDATE nodes SET wireguard_public_key = $2, overlay_address = $3 WHERE name = $1', [name, randomBytes(32).toString('base64'), firstFreeAddress(overlayPool(cidr), taken)]);
}

const byName = (report: DoctorReport, probe: string): ProbeResult | undefined => report.probes.find((result) => result.probe === probe);
const verdicts = (report: DoctorReport): Record<string, string> => Object.fromEntries(report.probes.map((result) => [result.probe, result.verdict]));

describe('mesh-control doctor without a serving controller', () => {
  let store: PostgresStore;

  beforeAll(async () => {
    store = await PostgresStore.open(suite.postgres.url);
  });

  afterAll(async () => {
    await store?.close();
  });

  test('fails the controller probe naming mesh-control serve, and still probes the store, broker and certificate', async () => {
    const report = await askDoctor(suite.mesh.dir, { answerWithinMs: 2_000, boundMs: BOUND_MS });
    expect(report.source).toBe('directory');
    expect(report.ok).toBe(false);
    expect(report.probes[0]?.probe).toBe('controller');
    expect(report.probes[0]).toMatchObject({ verdict: 'fail', next: `start it: mesh-control serve --dir '${suite.mesh.dir}'` });
    expect(verdicts(report)).toMatchObject({ store: 'pass', broker: 'pass', certificate: 'pass', 'node-reports': 'pass', 'declarations-valid': 'pass' });
    expect(verdicts(report)).not.toHaveProperty('lease');
  }, 60_000);

  test('the verb prints one line per probe, failures first with their next step, and exits 1', async () => {
    const run = await runCommand(DoctorCommand, ['doctor', '--dir', suite.mesh.dir]);
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^FAIL\s+controller\s+no serving controller answered .*; next: start it: mesh-control serve --dir /);
    expect(lines.filter((line) => /^PASS\s+store\s/.test(line))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/probes fail or cannot run, run from the mesh directory alone/);
    const json = await runCommand(DoctorCommand, ['doctor', '--dir', suite.mesh.dir, '--json']);
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stdout) as DoctorReport).source).toBe('directory');
  }, 60_000);

  test('a store missing one migration fails the store probe naming it, never passes', async () => {
    const [removed] = await store.query<{ version: number; name: string; checksum: string }>('DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations) RETURNING version, name, checksum');
    if (removed === undefined) throw new Error('the store holds no migrations');
    try {
      const report = await askDoctor(suite.mesh.dir, { answerWithinMs: 2_000, boundMs: BOUND_MS });
      expect(byName(report, 'store')).toMatchObject({ verdict: 'fail', detail: expect.stringContaining(`not applied: ${removed.name}`), next: expect.stringContaining('mesh-control serve') });
    } finally {
      await store.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [removed.version, removed.name, removed.checksum]);
    }
  }, 60_000);

  test('mesh.json pointing at a database that is not there makes the store probes cannot-run, never pass', async () => {
    const meshFile = `${suite.mesh.dir}/mesh.json`;
    const original = await fs.readFile(meshFile, 'utf8');
    const mesh = JSON.parse(original) as { store: { url: string } };
    mesh.store.url = mesh.store.url.replace(/:\d+\//, `:${await freePort()}/`);
    await fs.writeFile(meshFile, JSON.stringify(mesh, null, 2));
    try {
      const report = await askDoctor(suite.mesh.dir, { answerWithinMs: 2_000, boundMs: BOUND_MS });
      expect(byName(report, 'store')).toMatchObject({ verdict: 'cannot-run', next: expect.stringContaining('store is reachable') });
      for (const probe of ['node-reports', 'declarations-valid', 'declaration-stream']) expect(byName(report, probe)?.verdict).not.toBe('pass');
      expect(byName(report, 'broker')?.verdict).toBe('pass');
    } finally {
      await fs.writeFile(meshFile, original);
    }
  }, 60_000);
});

describe('the doctor in mesh-control serve', () => {
  let serving: ServingController;
  const logs: string[] = [];
  let stuck = false;

  const stuckProbe: DoctorProbe = {
    name: 'stuck',
    whenCannotRun: 'unstick it',
    run: async (signal) => {
      while (stuck && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, 50));
      return { verdict: 'pass', detail: 'not stuck' };
    },
  };
  const runs = (): string | undefined => serving.doctor.last()?.at;
  /** Waits for a periodic run that started after now to end. */
  async function nextRun(): Promise<DoctorReport> {
    const before = runs();
    const asked = Date.now();
    await eventually('the next periodic doctor run', () => runs() !== before && Date.parse(runs() ?? '') > asked, WAIT);
    return serving.doctor.last() as DoctorReport;
  }

  beforeAll(async () => {
    await ready();
    const store = await PostgresStore.open(suite.postgres.url);
    try {
      await enrolled(store, suite.mesh.config.overlay.cidr, 'kitchen', 'resident');
      await enrolled(store, suite.mesh.config.overlay.cidr, 'phone', 'episodic');
    } finally {
      await store.close();
    }
    // The read-back runs at start only here, so a consumer deleted by a test stays deleted until
    // the test repairs it.
    serving = await serveController(suite.mesh.dir, {
      log: (line) => logs.push(line),
      readBackEveryMs: 3_600_000,
      statusEveryMs: 200,
      doctor: { everyMs: 300, firstAfterMs: 300, boundMs: BOUND_MS, probes: (_ctx, probes) => [...probes, stuckProbe] },
    });
  }, 60_000);

  afterAll(async () => {
    stuck = false;
    await serving?.stop();
  }, 60_000);

  test('on a healthy mesh every probe passes, from the CLI and in status', async () => {
    await eventually('a doctor run with every probe passing', () => serving.doctor.last()?.ok === true, { ...WAIT, seen: () => JSON.stringify(serving.doctor.last()?.probes.filter((probe) => probe.verdict !== 'pass')) });
    const report = await askDoctor(suite.mesh.dir, { boundMs: BOUND_MS });
    expect(report.source).toBe('serving');
    expect(report.probes.filter((probe) => probe.verdict !== 'pass')).toEqual([]);
    expect(Object.keys(verdicts(report)).sort()).toEqual(['broker', 'certificate', 'declaration-stream', 'declarations-valid', 'lease', 'node-reports', 'store', 'stuck']);
    expect(byName(report, 'declarations-valid')?.detail).toContain('2 node(s)');
    expect(byName(report, 'declaration-stream')?.detail).toContain('all 2 node(s)');
    await eventually('status carries the doctor with nothing failing', async () => {
      const status = (await callController(suite.mesh.dir, 'status', {})).result as ControllerStatus;
      return status.doctor != null && status.doctor.failing.length === 0;
    }, WAIT);
    // The CLI as a person runs it, in a process of its own.
    const cli = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(process.execPath, [path.resolve(__dirname, '..', '..', '..', 'bin', 'mesh-control'), 'doctor', '--dir', suite.mesh.dir], { timeout: 60_000 }, (error, stdout) => resolve({ code: error === null ? 0 : (error.code as number | null), stdout }));
    });
    expect(cli.stdout.trimEnd().split('\n').at(-1)).toMatch(/^all 8 probes pass, run by the serving controller/);
    expect(cli.code).toBe(0);
    const text = (await callController(suite.mesh.dir, 'status', {})).text;
    expect(text.split('\n').filter((line) => line.startsWith('doctor: '))).toEqual([expect.stringMatching(/^doctor: every probe passes \(run .* ago; mesh-control doctor\)$/)]);
  }, 90_000);

  test('a node\'s consumer deleted by hand fails the stream probe naming that node, said once in the log, until the read-back makes it again', async () => {
    const manager = await jetstreamManager(serving.ctx.nc);
    const logged = logs.length;
    await manager.consumers.delete(DECLARATION_STREAM, declarationConsumer('kitchen'));
    const report = await askDoctor(suite.mesh.dir, { boundMs: BOUND_MS });
    const stream = byName(report, 'declaration-stream');
    expect(stream).toMatchObject({ verdict: 'fail', detail: expect.stringContaining('kitchen') });
    expect(stream?.detail).not.toContain('phone');
    expect(report.ok).toBe(false);
    expect(report.probes[0]?.probe).toBe('declaration-stream');

    // Three more runs: the same failure is logged once, not every run.
    await nextRun();
    await nextRun();
    await nextRun();
    expect(logs.slice(logged).filter((line) => line.startsWith('doctor: declaration-stream fail'))).toEqual([expect.stringContaining(': kitchen; next: ')]);
    await eventually('status lists the failing probe', async () => {
      const status = (await callController(suite.mesh.dir, 'status', {})).result as ControllerStatus;
      return status.doctor?.failing.some((probe) => probe.probe === 'declaration-stream' && probe.detail.includes('kitchen')) === true;
    }, WAIT);

    await readBackDeclarations(serving.ctx);
    const after = await askDoctor(suite.mesh.dir, { boundMs: BOUND_MS });
    expect(byName(after, 'declaration-stream')?.verdict).toBe('pass');
    await eventually('the log says the probe passes again', () => logs.some((line) => line.startsWith('doctor: declaration-stream passes again')), WAIT);
  }, 120_000);

  test('a phone declared a package fails the validator probe naming the phone, before anything is sent', async () => {
    await serving.ctx.store.query(
      `UPDATE nodes SET declared_resources = $2, overlay_applied_generation = declaration_generation WHERE name = $1`,
      ['phone', JSON.stringify([{ shape: 'package', name: 'htop' }])],
    );
    const sentBefore = await serving.ctx.store.query<{ count: number }>(`SELECT count(*)::int AS count FROM declarations WHERE node = 'phone'`);
    try {
      const report = await askDoctor(suite.mesh.dir, { boundMs: BOUND_MS });
      expect(byName(report, 'declarations-valid')).toMatchObject({ verdict: 'fail', detail: expect.stringMatching(/phone: .*episodic host.*names a package/) });
      expect(byName(report, 'declarations-valid')?.detail).not.toContain('kitchen');
      expect(await serving.ctx.store.query(`SELECT count(*)::int AS count FROM declarations WHERE node = 'phone'`)).toEqual(sentBefore);

      // The host's own gate, given the same declaration, refuses it for the same reason.
      const composed = await composeFull(serving.ctx, 'phone');
      const payload = parseContract(Declaration, { node: 'phone', epoch: serving.ctx.epoch(), generation: 1000, kind: 'full', issued_at: new Date().toISOString(), resources: composed.resources, ...(composed.overlay === undefined ? {} : { overlay: composed.overlay }) }, 'declaration');
      const identity = generateNodeIdentity();
      const host = enrolledState(
        emptyHostState(),
        { node: 'phone', nkey_public: identity.nkey_public, public_key: identity.public_key, secret_key: identity.secret_key },
        { broker_url: suite.mesh.config.broker.url, broker_fingerprint: suite.mesh.config.broker.fingerprint, controller_public_key: suite.mesh.config.controller.public_key },
      );
      const admission = admitDeclaration(sealEnvelope(payload, serving.ctx.signingKey), host, { hostUnit: DEFAULT_SETTINGS.hostUnit, root: DEFAULT_SETTINGS.root, stateDir: DEFAULT_SETTINGS.stateDir, shapes: SHAPES_FOR_HOST_KIND.episodic });
      expect(admission).toMatchObject({ ok: false, reason: 'shape_not_supported' });
    } finally {
      await serving.ctx.store.query(`UPDATE nodes SET declared_resources = '[]' WHERE name = 'phone'`);
    }
  }, 90_000);

  test('a node declared the host\'s own unit fails the validator probe naming it, and the host\'s gate refuses the same declaration for the same reason', async () => {
    await serving.ctx.store.query(
      `UPDATE nodes SET declared_resources = $2, overlay_applied_generation = declaration_generation WHERE name = $1`,
      ['kitchen', JSON.stringify([{ shape: 'service', name: 'nox-mesh-host.service', state: 'stopped', enabled: false }])],
    );
    try {
      const report = await askDoctor(suite.mesh.dir, { boundMs: BOUND_MS });
      expect(byName(report, 'declarations-valid')).toMatchObject({ verdict: 'fail', detail: expect.stringMatching(/kitchen: .*refused whole by the host \(own_unit\).*"nox-mesh-host\.service", which is the host itself/) });
      expect(byName(report, 'declarations-valid')?.detail).not.toContain('phone');

      const composed = await composeFull(serving.ctx, 'kitchen');
      const payload = parseContract(Declaration, { node: 'kitchen', epoch: serving.ctx.epoch(), generation: 1000, kind: 'full', issued_at: new Date().toISOString(), resources: composed.resources, ...(composed.overlay === undefined ? {} : { overlay: composed.overlay }) }, 'declaration');
      const identity = generateNodeIdentity();
      const host = enrolledState(
        emptyHostState(),
        { node: 'kitchen', nkey_public: identity.nkey_public, public_key: identity.public_key, secret_key: identity.secret_key },
        { broker_url: suite.mesh.config.broker.url, broker_fingerprint: suite.mesh.config.broker.fingerprint, controller_public_key: suite.mesh.config.controller.public_key },
      );
      const admission = admitDeclaration(sealEnvelope(payload, serving.ctx.signingKey), host, { hostUnit: DEFAULT_SETTINGS.hostUnit, root: DEFAULT_SETTINGS.root, stateDir: DEFAULT_SETTINGS.stateDir, shapes: SHAPES_FOR_HOST_KIND.resident });
      expect(admission).toMatchObject({ ok: false, reason: 'own_unit', detail: expect.stringContaining('"nox-mesh-host.service", which is the host itself') });
    } finally {
      await serving.ctx.store.query(`UPDATE nodes SET declared_resources = '[]' WHERE name = 'kitchen'`);
    }
  }, 90_000);

  test('a node that refused its declaration, and a connected node silent on one sent an hour ago, fail the reports probe by name', async () => {
    const sql = serving.ctx.store;
    await sql.query(`UPDATE nodes SET report_generation = declaration_generation, reported_at = now(), report_summary = '{"refused": "stale_epoch"}' WHERE name = 'phone'`);
    await sql.query(`UPDATE declarations SET sent_at = now() - interval '1 hour' WHERE node = 'kitchen' AND generation = (SELECT max(generation) FROM declarations WHERE node = 'kitchen')`);
    try {
      const report = await askDoctor(suite.mesh.dir, { boundMs: BOUND_MS });
      const reports = byName(report, 'node-reports');
      expect(reports).toMatchObject({ verdict: 'fail', detail: expect.stringMatching(/phone refused generation \d+ \(stale_epoch\)/) });
      expect(reports?.detail).toMatch(/kitchen has not reported on generation \d+, sent at .*, while connected/);
      expect(reports?.next).toContain(`mesh-control nodes --dir '${suite.mesh.dir}'`);
    } finally {
      await sql.query(`UPDATE nodes SET report_generation = NULL, reported_at = NULL, report_summary = NULL WHERE name = 'phone'`);
      await sql.query(`UPDATE declarations SET sent_at = now() WHERE node = 'kitchen'`);
    }
    expect(byName(await askDoctor(suite.mesh.dir, { boundMs: BOUND_MS }), 'node-reports')?.verdict).toBe('pass');
  }, 90_000);

  test('a probe that hangs is cannot-run after its bound, and the rest still answer', async () => {
    stuck = true;
    try {
      const report = await askDoctor(suite.mesh.dir, { boundMs: BOUND_MS });
      expect(byName(report, 'stuck')).toEqual({ probe: 'stuck', verdict: 'cannot-run', detail: `did not finish within ${BOUND_MS / 1000} s`, next: 'unstick it' });
      expect(report.ok).toBe(false);
      expect(byName(report, 'store')?.verdict).toBe('pass');
    } finally {
      stuck = false;
    }
  }, 90_000);
});
