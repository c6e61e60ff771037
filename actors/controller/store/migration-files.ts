import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { MigrationFileNameInvalid, MigrationsFolderMissing, MigrationVersionDuplicate } from './migration-errors';

// Set by scripts/build-controller.ts: the folder's place relative to the packaged bundle.
declare const MESH_BUILD_MIGRATIONS_DIR: string | undefined;

/**
 * The project's migrations folder: beside the bundle in the controller's package
 * (/usr/lib/mesh-control/migrations), else found from this file's place in the source tree.
 */
export const DEFAULT_MIGRATIONS_DIR = typeof MESH_BUILD_MIGRATIONS_DIR === 'string'
  ? path.resolve(__dirname, MESH_BUILD_MIGRATIONS_DIR)
  : path.resolve(__dirname, '../../../migrations');

/** One numbered SQL file from the migrations folder. */
export interface MigrationFile {
  /** The number the file starts with: its place in the order. */
  version: number;
  /** The file's name, `0001_nodes.sql`. */
  name: string;
  /** SHA-256 of the SQL with line endings made `\n`, lowercase hex. */
  checksum: string;
  sql: string;
}

const NAME = /^(\d{4})_[a-z0-9]+(?:_[a-z0-9]+)*\.sql$/;

/**
 * Reads every `.sql` file in `dir`, in order of number. Other files (a README) are left alone;
 * a `.sql` file that is not named `NNNN_name.sql`, or two files with one number, are refused
 * rather than skipped, since either would change what runs without anyone seeing it.
 */
export async function readMigrationFiles(dir: string = DEFAULT_MIGRATIONS_DIR): Promise<MigrationFile[]> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new MigrationsFolderMissing(dir);
    throw error;
  }
  const files: MigrationFile[] = [];
  for (const name of names.filter((entry) => entry.toLowerCase().endsWith('.sql')).sort()) {
    const match = NAME.exec(name);
    if (match === null) throw new MigrationFileNameInvalid(name);
    const sql = await fs.readFile(path.join(dir, name), 'utf8');
    files.push({ version: Number(match[1]), name, checksum: migrationChecksum(sql), sql });
  }
  for (let i = 1; i < files.length; i += 1) {
    const previous = files[i - 1] as MigrationFile;
    const current = files[i] as MigrationFile;
    if (previous.version === current.version) throw new MigrationVersionDuplicate(previous.name, current.name);
  }
  return files;
}

/**
 * The checksum recorded for an applied migration. Line endings are made `\n` first, so the same
 * file checked out on Windows is not taken for a changed one.
 */
export function migrationChecksum(sql: string): string {
  return createHash('sha256').update(sql.replace(/\r\n/g, '\n')).digest('hex');
}
