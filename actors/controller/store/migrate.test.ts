import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestPostgres, type TestPostgres } from '../../shared/testing/test-postgres';
import { migrate } from './migrate';
import { MigrationChanged, MigrationFailed, MigrationMissing, MigrationOutOfOrder } from './migration-errors';
import { DEFAULT_MIGRATIONS_DIR, readMigrationFiles } from './migration-files';
import { PostgresStore } from './postgres-store';
import type { SqlStore } from './sql-store';

// Every test gets a new database on one server, and closes the stores it opened.
let server: TestPostgres;
let work: string;
const opened: SqlStore[] = [];
beforeAll(async () => { server = await startTestPostgres(); }, 60_000);
afterAll(async () => { await server.stop(); });
beforeEach(async () => { work = await fs.mkdtemp(path.join(os.tmpdir(), 'migrate-')); });
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
  await fs.rm(work, { recursive: true, force: true });
});

async function newStore(url?: string): Promise<SqlStore> {
  const store = await PostgresStore.open(url ?? (await server.createDatabase()));
  opened.push(store);
  return store;
}

/** A copy of the project's migrations to change, keeping only the numbers given (all when none). */
async function migrationsCopy(keep?: number[]): Promise<string> {
  const dir = path.join(work, `migrations-${Math.random().toString(36).slice(2)}`);
  await fs.mkdir(dir);
  for (const file of await readMigrationFiles()) {
    if (keep === undefined || keep.includes(file.version)) await fs.writeFile(path.join(dir, file.name), file.sql);
  }
  return dir;
}

async function appliedNames(store: SqlStore): Promise<string[]> {
  return (await store.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version')).map((row) => row.name);
}

test('applies every migration to a new database in order and records each with its checksum', async () => {
  const store = await newStore();
  const files = await readMigrationFiles();
  const result = await migrate(store);
  expect(result).toEqual({ applied: files.map((file) => file.name), latest: files.at(-1)?.name });
  const rows = await store.query<{ version: number; name: string; checksum: string; applied_at: Date }>('SELECT * FROM schema_migrations ORDER BY version');
  expect(rows.map(({ version, name, checksum }) => ({ version, name, checksum }))).toEqual(files.map(({ version, name, checksum }) => ({ version, name, checksum })));
  expect(rows.every((row) => row.applied_at instanceof Date)).toBe(true);
  const tables = await store.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
  expect(tables.map((row) => row.name)).toEqual(expect.arrayContaining(['controller_epoch', 'declarations', 'nodes', 'report_refusals', 'reports', 'schema_migrations', 'tokens']));
});

test('a second run on an up-to-date store applies nothing', async () => {
  const store = await newStore();
  await migrate(store);
  const files = await readMigrationFiles();
  expect(await migrate(store)).toEqual({ applied: [], latest: files.at(-1)?.name });
});

test('five controllers migrating one new database at once apply each migration exactly once', async () => {
  const url = await server.createDatabase();
  const stores = await Promise.all(Array.from({ length: 5 }, () => newStore(url)));
  const results = await Promise.all(stores.map((store) => migrate(store)));
  const files = await readMigrationFiles();
  expect(results.flatMap((result) => result.applied).sort()).toEqual(files.map((file) => file.name).sort());
  expect(results.every((result) => result.latest === files.at(-1)?.name)).toBe(true);
  expect(await appliedNames(stores[0] as SqlStore)).toEqual(files.map((file) => file.name));
});

test('applies only the new migrations to a store that has the earlier ones', async () => {
  const store = await newStore();
  await migrate(store, { dir: await migrationsCopy([1, 2]) });
  const result = await migrate(store);
  expect(result.applied[0]).toBe('0003_declarations.sql');
  expect(await appliedNames(store)).toEqual((await readMigrationFiles()).map((file) => file.name));
});

test('refuses a store whose applied migration was edited since, naming the file and the way out', async () => {
  const store = await newStore();
  const dir = await migrationsCopy();
  await migrate(store, { dir });
  await fs.appendFile(path.join(dir, '0002_tokens.sql'), '\nALTER TABLE tokens ADD COLUMN note text;\n');
  const refusal = migrate(store, { dir });
  await expect(refusal).rejects.toThrow(MigrationChanged);
  await expect(refusal).rejects.toThrow(/0002_tokens\.sql differs from the one this store applied/);
  await expect(refusal).rejects.toMatchObject({ file: '0002_tokens.sql', next: expect.stringContaining('new numbered migration') });
  const columns = await store.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'tokens' AND column_name = 'note'");
  expect(columns).toEqual([]);
});

test('refuses a store whose applied migration was renamed', async () => {
  const store = await newStore();
  const dir = await migrationsCopy();
  await migrate(store, { dir });
  await fs.rename(path.join(dir, '0004_reports.sql'), path.join(dir, '0004_reports_and_refusals.sql'));
  await expect(migrate(store, { dir })).rejects.toThrow(/renamed from 0004_reports\.sql/);
});

test('refuses a store that applied a migration this program does not have', async () => {
  const store = await newStore();
  const newer = await migrationsCopy();
  await fs.writeFile(path.join(newer, '9000_from_a_newer_release.sql'), 'CREATE TABLE newer_thing (a int);');
  await migrate(store, { dir: newer });
  const refusal = migrate(store);
  await expect(refusal).rejects.toThrow(MigrationMissing);
  await expect(refusal).rejects.toThrow(/9000_from_a_newer_release\.sql .* the store is newer than this program/);
});

test('refuses a new migration numbered below one already applied', async () => {
  const store = await newStore();
  await migrate(store, { dir: await migrationsCopy([1, 2, 4, 5]) }); // 0003 is added later, out of order
  const refusal = migrate(store);
  await expect(refusal).rejects.toThrow(MigrationOutOfOrder);
  await expect(refusal).rejects.toMatchObject({ file: '0003_declarations.sql', next: expect.stringContaining('renumber 0003_declarations.sql after 0005_controller_epoch.sql') });
  expect(await appliedNames(store)).not.toContain('0003_declarations.sql');
});

test('a migration that fails is rolled back whole and not recorded; those before it stay applied', async () => {
  const store = await newStore();
  const dir = await migrationsCopy();
  await fs.writeFile(path.join(dir, '9999_half_done.sql'), 'CREATE TABLE first_half (a int);\nSELECT * FROM no_such_table;\n');
  const refusal = migrate(store, { dir });
  await expect(refusal).rejects.toThrow(MigrationFailed);
  await expect(refusal).rejects.toThrow(/9999_half_done\.sql failed and was rolled back: relation "no_such_table" does not exist/);
  expect(await store.query("SELECT to_regclass('first_half') AS found")).toEqual([{ found: null }]);
  expect(await appliedNames(store)).toEqual((await readMigrationFiles(DEFAULT_MIGRATIONS_DIR)).map((file) => file.name));
});
