import { existsSync } from 'node:fs';
import { Client } from 'pg';
import { startTestPostgres, type TestPostgres } from './test-postgres';

let server: TestPostgres;
beforeAll(async () => { server = await startTestPostgres(); }, 60_000);
afterAll(async () => { await server.stop(); });

async function queryOne<T>(url: string, sql: string): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0] as T;
  } finally {
    await client.end();
  }
}

test('starts a PostgreSQL 15 that answers at its URL, in the database it made', async () => {
  const row = await queryOne<{ version: string; db: string }>(server.url, 'SELECT version(), current_database() AS db');
  expect(row.version).toMatch(/^PostgreSQL 15\./);
  expect(row.db).toBe('mesh_test');
  expect(server.majorVersion).toBe(15);
});

test('listens on a unix socket in its own directory as well', async () => {
  const row = await queryOne<{ one: number }>(`postgres://postgres@/mesh_test?host=${encodeURIComponent(server.socketDir)}&port=${server.port}`, 'SELECT 1 AS one');
  expect(row.one).toBe(1);
});

test('runs with durability off, since nothing a test writes must survive a crash', async () => {
  const row = await queryOne<{ fsync: string }>(server.url, 'SHOW fsync');
  expect(row.fsync).toBe('off');
});

test('makes further empty databases that do not share tables', async () => {
  const other = await server.createDatabase();
  const client = new Client({ connectionString: other });
  await client.connect();
  try {
    await client.query('CREATE TABLE only_here (a int)');
  } finally {
    await client.end();
  }
  const row = await queryOne<{ found: string | null }>(server.url, "SELECT to_regclass('only_here')::text AS found");
  expect(row.found).toBeNull();
});

test('stop ends the server and removes its files', async () => {
  const second = await startTestPostgres({ database: 'second' });
  expect(second.url).toMatch(/\/second$/);
  await second.stop();
  expect(existsSync(second.socketDir)).toBe(false);
  const client = new Client({ connectionString: second.url, connectionTimeoutMillis: 2000 });
  await expect(client.connect()).rejects.toThrow(/ECONNREFUSED/);
  await second.stop();
});
