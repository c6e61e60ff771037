import { MAX_SECRET_BYTES } from '../../../schema/secret';
import type { ControllerContext } from '../controller-context';
import { assignmentsOfModule, getRevision } from '../modules/modules.repo';
import { decryptSecret, encryptSecret } from './secret-cipher';
import { SecretNotSet, SecretStillNamed, SecretStoreKeyUnusable, SecretValueEmpty, SecretValueTooLarge } from './secret-errors';
import { loadStoreKey, storeKeyFile } from './secret-store-key';
import { countSecretsNotUnder, deleteSecret, getSecret, listSecretRows, sealsToDeadKeys, upsertSecret, type SecretRow } from './secrets.repo';

/** What `secret set` and `secret unset` did: names and versions, never the value. */
export interface SecretChanged {
  module: string;
  name: string;
  /** The version now kept; null once unset. */
  version: number | null;
  bytes: number | null;
  /** False for an unset of a secret that was not set. */
  changed: boolean;
}

/** One line of `secret list`. */
export interface SecretListed {
  module: string;
  name: string;
  version: number;
  bytes: number;
  set_at: string;
  /** Nodes whose key died holding this secret sealed: the mesh can no longer seal it to them. */
  cannot_seal_to: Array<{ node: string; path: string; version: number; key_died_at: string; reason: string }>;
}

function binding(module: string, name: string, version: number): string {
  return `${module}/${name}/${version}`;
}

/**
 * Keeps `value` as the next version of MODULE/NAME, encrypted under the store key (made on first
 * use). Refused whole: an empty value, one over MAX_SECRET_BYTES, and a store whose secrets are
 * under a key other than the one found (a lost or swapped key file). The value is never logged.
 */
export async function setSecret(ctx: Pick<ControllerContext, 'store' | 'config' | 'now' | 'log'>, module: string, name: string, value: Uint8Array): Promise<SecretChanged> {
  if (value.length === 0) throw new SecretValueEmpty(module, name);
  if (value.length > MAX_SECRET_BYTES) throw new SecretValueTooLarge(module, name, value.length);
  const existing = await loadStoreKey(ctx.config, false);
  if (existing === undefined && (await countSecretsNotUnder(ctx.store, null)) > 0) {
    throw new SecretStoreKeyUnusable(storeKeyFile(ctx.config), 'the file is missing, and secrets are kept under it');
  }
  const key = existing ?? (await loadStoreKey(ctx.config, true));
  if (key === undefined) throw new Error('the store key was not made');
  if ((await countSecretsNotUnder(ctx.store, key.id)) > 0) throw new SecretStoreKeyUnusable(key.file, 'it is not the key the kept secrets were encrypted with');
  const version = ((await getSecret(ctx.store, module, name))?.version ?? 0) + 1;
  await upsertSecret(ctx.store, {
    module,
    name,
    version,
    ciphertext: encryptSecret(value, key.key, binding(module, name, version)),
    key_id: key.id,
    bytes: value.length,
    set_at: ctx.now(),
  });
  ctx.log(`secret ${module}/${name} set, version ${version} (${value.length} bytes)`, { level: 'info', module, secret: name, version });
  return { module, name, version, bytes: value.length, changed: true };
}

/**
 * Forgets MODULE/NAME and its sealed boxes. Refused while a node runs a revision of the module
 * whose files name it (SecretStillNamed): that node could no longer be sent its declaration.
 */
export async function unsetSecret(ctx: Pick<ControllerContext, 'store' | 'log'>, module: string, name: string): Promise<SecretChanged> {
  const users: string[] = [];
  for (const assignment of await assignmentsOfModule(ctx.store, module)) {
    const revision = await getRevision(ctx.store, module, assignment.version);
    const names = revision?.resources.some((resource) => resource.shape === 'file' && 'secret' in resource.content && resource.content.secret === name) === true;
    if (names) users.push(`module ${module} ${assignment.version} on node ${assignment.node}`);
  }
  if (users.length > 0) throw new SecretStillNamed(module, name, users);
  const changed = await deleteSecret(ctx.store, module, name);
  if (changed) ctx.log(`secret ${module}/${name} unset`, { level: 'info', module, secret: name });
  return { module, name, version: null, bytes: null, changed };
}

/** Every secret (or one module's): names, versions, sizes, when set, and dead keys it sat under. */
export async function listSecrets(ctx: Pick<ControllerContext, 'store'>, module?: string): Promise<SecretListed[]> {
  const dead = await sealsToDeadKeys(ctx.store, module);
  return (await listSecretRows(ctx.store, module)).map((row) => ({
    module: row.module,
    name: row.name,
    version: row.version,
    bytes: row.bytes,
    set_at: new Date(row.set_at).toISOString(),
    cannot_seal_to: dead
      .filter((seal) => seal.module === row.module && seal.name === row.name)
      .map((seal) => ({ node: seal.node, path: seal.path, version: Number(seal.version), key_died_at: new Date(seal.died_at).toISOString(), reason: seal.reason })),
  }));
}

/**
 * The value of MODULE/NAME, decrypted in memory for sealing; the caller drops it after. Throws
 * SecretNotSet (naming `forWhat`) when it is not set, SecretStoreKeyUnusable when the key is gone.
 */
export async function secretValue(ctx: Pick<ControllerContext, 'store' | 'config'>, module: string, name: string, forWhat: string): Promise<{ row: SecretRow; value: Buffer }> {
  const row = await getSecret(ctx.store, module, name);
  if (row === undefined) throw new SecretNotSet(module, name, forWhat);
  const key = await loadStoreKey(ctx.config, false);
  if (key === undefined) throw new SecretStoreKeyUnusable(storeKeyFile(ctx.config), 'the file is missing');
  if (key.id !== row.key_id) throw new SecretStoreKeyUnusable(key.file, 'it is not the key this secret was encrypted with');
  try {
    return { row, value: decryptSecret(row.ciphertext, key.key, binding(module, name, row.version)) };
  } catch {
    throw new SecretStoreKeyUnusable(key.file, `the stored value of ${module}/${name} does not decrypt (altered in the store, or moved from another row)`);
  }
}
