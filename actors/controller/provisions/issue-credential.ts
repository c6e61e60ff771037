import { randomBytes } from 'node:crypto';
import type { ControllerContext } from '../controller-context';
import { decryptSecret, encryptSecret } from '../secrets/secret-cipher';
import { SecretStoreKeyUnusable } from '../secrets/secret-errors';
import { loadStoreKey, storeKeyFile } from '../secrets/secret-store-key';
import { getCredential, upsertCredential, type CredentialRow, type ProviderOnMesh } from './provisions.repo';

// A credential is 32 random bytes, written base64url (43 characters): text any program can read
// from its file and compare, with nothing to trim. It is encrypted at rest as secrets are, under
// the same store key, and the encryption is bound to where it belongs.

function binding(row: Pick<CredentialRow, 'provision' | 'node' | 'module' | 'version'>): string {
  return `provision/${row.provision}/${row.node}/${row.module}/${row.version}`;
}

/** A fresh credential's value. */
function freshValue(): Buffer {
  return Buffer.from(randomBytes(32).toString('base64url'), 'utf8');
}

/**
 * Issues the consumer (`node`, `module`) a credential for `provision` from `provider`, or, when
 * `rotate`, replaces the one it holds with a new value one version up. Without `rotate`, a
 * consumer already holding one keeps it (and its provider of record). Returns the row kept.
 */
export async function issueCredential(
  ctx: Pick<ControllerContext, 'store' | 'config' | 'now'>,
  consumer: { provision: string; node: string; module: string },
  provider: Pick<ProviderOnMesh, 'node' | 'module'>,
  rotate = false,
): Promise<CredentialRow> {
  const held = await getCredential(ctx.store, consumer.provision, consumer.node, consumer.module);
  if (held !== undefined && !rotate) return held;
  const key = await loadStoreKey(ctx.config, true);
  if (key === undefined) throw new Error('the store key was not made');
  const value = freshValue();
  try {
    const base = { ...consumer, version: (held?.version ?? 0) + 1 };
    const row: CredentialRow = {
      ...base,
      provider_node: held?.provider_node ?? provider.node,
      provider_module: held?.provider_module ?? provider.module,
      ciphertext: encryptSecret(value, key.key, binding(base)),
      key_id: key.id,
      issued_at: ctx.now(),
    };
    await upsertCredential(ctx.store, row);
    return row;
  } finally {
    value.fill(0);
  }
}

/** A credential's value, decrypted in memory for sealing; the caller zeroes it after. */
export async function credentialValue(ctx: Pick<ControllerContext, 'config'>, row: Pick<CredentialRow, 'provision' | 'node' | 'module' | 'version' | 'ciphertext' | 'key_id'>): Promise<Buffer> {
  const key = await loadStoreKey(ctx.config, false);
  if (key === undefined) throw new SecretStoreKeyUnusable(storeKeyFile(ctx.config), 'the file is missing, and provision credentials are kept under it');
  if (key.id !== row.key_id) throw new SecretStoreKeyUnusable(key.file, `it is not the key the credential of ${row.module} on ${row.node} for ${row.provision} was encrypted with`);
  try {
    return decryptSecret(row.ciphertext, key.key, binding(row));
  } catch {
    throw new SecretStoreKeyUnusable(key.file, `the stored credential of ${row.module} on ${row.node} for ${row.provision} does not decrypt (altered in the store, or moved from another row)`);
  }
}
