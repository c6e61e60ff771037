import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MigrationFileNameInvalid, MigrationsFolderMissing, MigrationVersionDuplicate } from './migration-errors';
import { DEFAULT_MIGRATIONS_DIR, migrationChecksum, readMigrationFiles } from './migration-files';

let dir: string;
beforeEach(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'migrations-')); });
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

test('reads the .sql files in order of number and leaves other files alone', async () => {
  await fs.writeFile(path.join(dir, '0010_later.sql'), 'SELECT 10;');
  await fs.writeFile(path.join(dir, '0002_first.sql'), 'SELECT 2;');
  await fs.writeFile(path.join(dir, 'README.md'), 'notes');
  const files = await readMigrationFiles(dir);
  expect(files.map((file) => [file.version, file.name])).toEqual([[2, '0002_first.sql'], [10, '0010_later.sql']]);
  expect(files[0]?.checksum).toBe(migrationChecksum('SELECT 2;'));
});

test.each(['2_short.sql', '0003-dashed.sql', '0003_Upper.sql', '0003.sql'])('refuses a .sql file named %s rather than skip it', async (name) => {
  await fs.writeFile(path.join(dir, name), 'SELECT 1;');
  await expect(readMigrationFiles(dir)).rejects.toThrow(MigrationFileNameInvalid);
  await expect(readMigrationFiles(dir)).rejects.toThrow(name);
});

test('refuses two files with one number, naming both', async () => {
  await fs.writeFile(path.join(dir, '0004_one.sql'), 'SELECT 1;');
  await fs.writeFile(path.join(dir, '0004_other.sql'), 'SELECT 2;');
  await expect(readMigrationFiles(dir)).rejects.toThrow(MigrationVersionDuplicate);
  await expect(readMigrationFiles(dir)).rejects.toThrow(/0004_one\.sql and 0004_other\.sql/);
});

test('a file with Windows line endings has the checksum of the same file with Unix ones', () => {
  expect(migrationChecksum('SELECT 1;\r\nSELECT 2;\r\n')).toBe(migrationChecksum('SELECT 1;\nSELECT 2;\n'));
  expect(migrationChecksum('SELECT 1;')).not.toBe(migrationChecksum('SELECT 2;'));
});

test('says the folder is missing when it is', async () => {
  await expect(readMigrationFiles(path.join(dir, 'absent'))).rejects.toThrow(MigrationsFolderMissing);
});

test("the project's own migrations folder reads cleanly and starts at 0001", async () => {
  const files = await readMigrationFiles(DEFAULT_MIGRATIONS_DIR);
  expect(files[0]?.name).toBe('0001_nodes.sql');
});
