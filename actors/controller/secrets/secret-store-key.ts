import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import type { ControllerConfig } from '../../../schema/controller-config';
import { readKeyFile, writeKeyFile } from '../../shared/crypto/key-file';
import { KeyFileExists, KeyFileMissing } from '../../shared/crypto/key-errors';
import { messageOf } from '../../shared/message-of';
import { SecretStoreKeyUnusable } from './secret-errors';

/** The store key: 32 random bytes that encrypt every secret's value in the store. */
export interface StoreKey {
  key: Uint8Array;
  /** The first 16 hex digits of its SHA-256, kept beside each value (secrets.key_id). */
  id: string;
  file: string;
}

/**
 * Where the store key lives: `keys/secret-store.key` in the mesh directory, beside the
 * controller's signing key (0600 in a 0700 directory). Apart from the database on purpose: a
 * dump, a replica or a backup of the database alone reveals no secret.
 */
export function storeKeyFile(config: Pick<ControllerConfig, 'controller'>): string {
  return path.join(path.dirname(config.controller.signing_key_file), 'secret-store.key');
}

/**
 * Reads the store key, or makes it when `create` and there is none. It is made on first use (the
 * first `secret set`), not at `init`: meshes made before secrets existed have no key and need
 * none until they keep one, and every controller sharing a PostgreSQL store must be given the
 * same file, which only matters once there is something to read. Undefined when there is none
 * and `create` is false.
 */
export async function loadStoreKey(config: Pick<ControllerConfig, 'controller'>, create: boolean): Promise<StoreKey | undefined> {
  const file = storeKeyFile(config);
  let key: Uint8Array;
  try {
    key = await readKeyFile(file, { bytes: 32 });
  } catch (error) {
    if (!(error instanceof KeyFileMissing)) throw new SecretStoreKeyUnusable(file, messageOf(error));
    if (!create) return undefined;
    key = new Uint8Array(randomBytes(32));
    try {
      await writeKeyFile(file, key);
    } catch (raced) {
      // Another controller made it first: use theirs.
      if (!(raced instanceof KeyFileExists)) throw raced;
      key = await readKeyFile(file, { bytes: 32 });
    }
  }
  return { key, id: storeKeyId(key), file };
}

/** The id kept beside each value, to tell "another key" from "a damaged value". */
export function storeKeyId(key: Uint8Array): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}
