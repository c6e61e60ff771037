import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestPostgres, type TestPostgres } from '../../shared/testing/test-postgres';
import type { MigrateResult } from './migrate';
import { MigrationChanged } from './migration-errors';
import { readMigrationFiles } from './migration-files';
import { embeddedStoreDir, openStore } from './open-store';
import { StoreInUse, StoreUnreachable, StoreUrlInvalid } from './store-errors';

describe('the embedded store (PGlite)', () => {
  let dir: string;
  beforeAll(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'open-store-')); });
  afterAll(async () => { await fs.rm(dir, { recursive: true, force: true }); });

  test('is created in <dir>/store with every migration applied, and reopened with its records and nothing to apply', async () => {
    const names = (await readMigrationFiles()).map((file) => file.name);
    let migrated: MigrateResult | undefined;
    const store = await openStore({ dir }, { onMigrated: (result) => { migrated = result; } });
    try {
      expect(store.kind).toBe('pglite');
      expect(migrated).toEqual({ applied: names, latest: names.at(-1) });
      await expect(fs.access(path.join(embeddedStoreDir(dir), 'PG_VERSION'))).resolves.toBeUndefined();
      await store.query("INSERT INTO nodes (name, lifecycle_state) VALUES ('kept', 'revoked')");
    } finally {
      await store.close();
    }

    const again = await openStore({ dir }, { onMigrated: (result) => { migrated = result; } });
    try {
      expect(migrated).toEqual({ applied: [], latest: names.at(-1) });
      expect(await again.query('SELECT name FROM nodes')).toEqual([{ name: 'kept' }]);
    } finally {
      await again.close();
    }
  }, 120_000);

  test('is refused to a second open while the first holds it', async () => {
    const store = await openStore({ dir });
    try {
      await expect(openStore({ dir })).rejects.toThrow(StoreInUse);
    } finally {
      await store.close();
    }
  }, 60_000);

  test('is not opened when an applied migration changed, and is left free for the right program', async () => {
    const changed = await fs.mkdtemp(path.join(os.tmpdir(), 'open-store-migrations-'));
    try {
      for (const file of await readMigrationFiles()) await fs.writeFile(path.join(changed, file.name), file.sql);
      await fs.appendFile(path.join(changed, '0001_nodes.sql'), '\n-- an afterthought\n');
      await expect(openStore({ dir }, { migrationsDir: changed })).rejects.toThrow(MigrationChanged);
      await expect(openStore({ dir }, { migrationsDir: changed })).rejects.toThrow(/0001_nodes\.sql/);
    } finally {
      await fs.rm(changed, { recursive: true, force: true });
    }
    await (await openStore({ dir })).close();
  }, 60_000);
});

describe('a PostgreSQL store', () => {
  let server: TestPostgres;
  beforeAll(async () => { server = await startTestPostgres(); }, 60_000);
  afterAll(async () => { await server.stop(); });

  test('is opened from a URL with every migration applied', async () => {
    const store = await openStore({ url: server.url });
    try {
      expect(store.kind).toBe('postgres');
      const [row] = await store.query<{ count: number }>('SELECT count(*) AS count FROM schema_migrations');
      expect(row?.count).toBe((await readMigrationFiles()).length);
    } finally {
      await store.close();
    }
  });

  test('refuses an address that is not a PostgreSQL URL, without printing its password', async () => {
    const refusal = openStore({ url: 'mysql://admin:hunter2@db.example/mesh' });
    await expect(refusal).rejects.toThrow(StoreUrlInvalid);
    await expect(refusal).rejects.toMatchObject({ value: 'mysql://admin:***@db.example/mesh' });
  });

  test('says PostgreSQL is not answering, and that trying again later may work, when nothing listens', async () => {
    const refusal = openStore({ url: `postgres://postgres:secret-pw@127.0.0.1:${await closedPort()}/mesh` });
    await expect(refusal).rejects.toThrow(StoreUnreachable);
    await expect(refusal).rejects.toMatchObject({ retryable: true, value: expect.not.stringContaining('secret-pw') });
  });

  test('says the database does not exist, and that waiting will not help', async () => {
    const refusal = openStore({ url: server.url.replace(/\/mesh_test$/, '/no_such_db') });
    await expect(refusal).rejects.toThrow(StoreUnreachable);
    await expect(refusal).rejects.toMatchObject({ retryable: false, next: expect.stringContaining('createdb') });
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
