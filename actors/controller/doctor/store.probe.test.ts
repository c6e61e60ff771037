import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../store/open-store';
import { DEFAULT_MIGRATIONS_DIR } from '../store/migration-files';
import type { SqlStore } from '../store/sql-store';
import { runProbes } from './run-probes';
import { storeProbe } from './store.probe';

// The embedded store (PGlite) a one-machine mesh keeps, probed as the doctor does, and changed
// the way a person with psql and a migrations folder changes it.

describe('the store probe on the embedded store', () => {
  let work: string;
  let store: SqlStore;

  beforeAll(async () => {
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'doctor-store-'));
    store = await openStore({ dir: work });
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  const probe = async (migrationsDir?: string) => (await runProbes([storeProbe(store, migrationsDir)], { source: 'serving' })).probes[0];

  test('passes a store with every migration applied', async () => {
    expect(await probe()).toMatchObject({ verdict: 'pass', detail: expect.stringMatching(/^answers; all \d+ migrations applied/) });
  });

  test('fails, naming the file, when the program carries a migration the store has not had', async () => {
    const newer = path.join(work, 'migrations');
    await fs.cp(DEFAULT_MIGRATIONS_DIR, newer, { recursive: true });
    await fs.writeFile(path.join(newer, '9999_later_change.sql'), 'CREATE TABLE later_change (id int);');
    expect(await probe(newer)).toMatchObject({ verdict: 'fail', detail: expect.stringContaining('not applied: 9999_later_change.sql'), next: expect.stringContaining('mesh-control serve') });
  });

  test('fails when an applied migration was edited afterwards', async () => {
    const edited = path.join(work, 'edited');
    await fs.cp(DEFAULT_MIGRATIONS_DIR, edited, { recursive: true });
    await fs.appendFile(path.join(edited, '0001_nodes.sql'), '\n-- tidied up\n');
    expect(await probe(edited)).toMatchObject({ verdict: 'fail', detail: expect.stringContaining('changed since applied: 0001_nodes.sql') });
  });

  test('fails a store whose migration record was dropped by hand', async () => {
    const rows = await store.query<Record<string, unknown>>('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version');
    await store.exec('DROP TABLE schema_migrations');
    try {
      expect(await probe()).toMatchObject({ verdict: 'fail', detail: expect.stringContaining('holds no migrations at all') });
    } finally {
      await store.exec('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL UNIQUE, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
      for (const row of rows) await store.query('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, $4)', [row.version, row.name, row.checksum, row.applied_at]);
    }
    expect((await probe())?.verdict).toBe('pass');
  });

  test('cannot run, never passes, on a store that was closed under it', async () => {
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'doctor-store-closed-'));
    try {
      const closed = await openStore({ dir: other });
      await closed.close();
      const report = await runProbes([storeProbe(closed)], { source: 'serving', boundMs: 10_000 });
      expect(report.probes[0]?.verdict).toBe('cannot-run');
      expect(report.ok).toBe(false);
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  }, 120_000);
});
