import { STORE_KINDS, useTestStore } from './testing/use-test-store';

describe.each(STORE_KINDS)('the %s store', (kind) => {
  const t = useTestStore(kind);

  test('returns a bigint as a number while it is a safe integer, and as a bigint beyond, never rounded', async () => {
    const [row] = await t.store.query<{ small: unknown; safe: unknown; big: unknown; counted: unknown }>(
      "SELECT 42::bigint AS small, 9007199254740991::bigint AS safe, 9007199254740993::bigint AS big, (SELECT count(*) FROM pg_class WHERE false) AS counted",
    );
    expect(row).toEqual({ small: 42, safe: 9007199254740991, big: 9007199254740993n, counted: 0 });
  });

  test('returns bigint arrays the same way', async () => {
    const [row] = await t.store.query<{ list: unknown }>("SELECT '{1,9007199254740993,NULL}'::bigint[] AS list");
    expect(row?.list).toEqual([1, 9007199254740993n, null]);
  });

  test('reads timestamptz as a Date, jsonb parsed, numeric as text', async () => {
    const [row] = await t.store.query<{ at: unknown; doc: unknown; amount: unknown }>(
      "SELECT '2026-12-01T10:00:00.123Z'::timestamptz AS at, '{\"a\":[1,\"x\"]}'::jsonb AS doc, 1.50::numeric AS amount",
    );
    expect(row).toEqual({ at: new Date('2026-12-01T10:00:00.123Z'), doc: { a: [1, 'x'] }, amount: '1.50' });
  });

  test('takes JSON text for a jsonb parameter and keeps an array an array', async () => {
    await t.store.exec('CREATE TABLE IF NOT EXISTS probe_json (id int PRIMARY KEY, doc jsonb)');
    await t.store.query('INSERT INTO probe_json (id, doc) VALUES ($1, $2), ($3, $4)', [1, JSON.stringify([1, 2]), 2, JSON.stringify('text')]);
    const rows = await t.store.query<{ kind: string; doc: unknown }>('SELECT jsonb_typeof(doc) AS kind, doc FROM probe_json ORDER BY id');
    expect(rows).toEqual([{ kind: 'array', doc: [1, 2] }, { kind: 'string', doc: 'text' }]);
  });

  test('commits a transaction that resolves and returns its value', async () => {
    await t.store.exec('CREATE TABLE IF NOT EXISTS probe_tx (id int PRIMARY KEY)');
    const value = await t.store.transaction(async (tx) => {
      await tx.query('INSERT INTO probe_tx (id) VALUES ($1)', [1]);
      return 'done';
    });
    expect(value).toBe('done');
    expect(await t.store.query('SELECT id FROM probe_tx WHERE id = 1')).toEqual([{ id: 1 }]);
  });

  test('rolls back a transaction that throws, and passes the error on', async () => {
    await t.store.exec('CREATE TABLE IF NOT EXISTS probe_tx (id int PRIMARY KEY)');
    const failure = new Error('changed my mind');
    await expect(t.store.transaction(async (tx) => {
      await tx.query('INSERT INTO probe_tx (id) VALUES ($1)', [2]);
      throw failure;
    })).rejects.toBe(failure);
    expect(await t.store.query('SELECT id FROM probe_tx WHERE id = 2')).toEqual([]);
  });

  test('rolls back a transaction whose statement failed, and the store goes on working', async () => {
    await t.store.exec('CREATE TABLE IF NOT EXISTS probe_tx (id int PRIMARY KEY)');
    await expect(t.store.transaction(async (tx) => {
      await tx.query('INSERT INTO probe_tx (id) VALUES ($1)', [3]);
      await tx.query('INSERT INTO probe_tx (id) VALUES ($1)', [3]);
    })).rejects.toMatchObject({ code: '23505' });
    expect(await t.store.query('SELECT id FROM probe_tx WHERE id = 3')).toEqual([]);
    expect(await t.store.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  test('runs a script of several statements, in a transaction too', async () => {
    await t.store.transaction((tx) => tx.exec('CREATE TABLE probe_script (a int); INSERT INTO probe_script VALUES (1); INSERT INTO probe_script VALUES (2);'));
    expect(await t.store.query('SELECT sum(a)::int AS total FROM probe_script')).toEqual([{ total: 3 }]);
  });

  test('refuses the store itself inside its own transaction, where PGlite would wait for ever', async () => {
    await t.store.exec('CREATE TABLE IF NOT EXISTS probe_tx (id int PRIMARY KEY)');
    await expect(t.store.transaction(async (tx) => {
      await tx.query('INSERT INTO probe_tx (id) VALUES ($1)', [4]);
      await t.store.query('SELECT 1');
    })).rejects.toThrow(/use the `tx` given/);
    await expect(t.store.transaction(() => t.store.transaction(async () => 'nested'))).rejects.toThrow(/use the `tx` given/);
    expect(await t.store.query('SELECT id FROM probe_tx WHERE id = 4')).toEqual([]);
  });

  test('still runs statements from elsewhere while a transaction is open', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const transaction = t.store.transaction(async (tx) => {
      await held;
      return tx.query<{ one: number }>('SELECT 1 AS one');
    });
    const outside = t.store.query<{ two: number }>('SELECT 2 AS two');
    release();
    expect(await transaction).toEqual([{ one: 1 }]);
    expect(await outside).toEqual([{ two: 2 }]);
  });
});
