import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { decodeBase64, encodeBase64 } from '../../shared/crypto/base64';
import { publicKeyOf, type NodeIdentity } from '../../shared/crypto/keys';
import { generateNodeIdentity, nkeyPublicOf } from '../../shared/crypto/nkey';
import { x25519PublicKey } from '../../shared/crypto/x25519';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { generateWireGuardKeyPair, type WireGuardKeyPair } from './wireguard-key';

/** The file in the state directory holding the keys of an enrolment not yet finished. 0600. */
export const PENDING_KEYS_FILE = 'enrolment-keys.json';

/** The keys a machine enrols with: its identity and its WireGuard pair. */
export interface EnrolmentKeys {
  identity: NodeIdentity;
  wireguard: WireGuardKeyPair;
}

/**
 * The keys to enrol with `tokenId`: the ones made for an earlier attempt with the same token
 * when there was one, else fresh ones, written down before anything is sent. A controller that
 * enrolled the machine but whose answer never arrived recognises the same keys presented with
 * the same token and answers again; fresh keys would meet "token used".
 */
export async function enrolmentKeysFor(stateDir: string, tokenId: string): Promise<EnrolmentKeys> {
  const file = path.join(stateDir, PENDING_KEYS_FILE);
  const earlier = await readPending(file, tokenId);
  if (earlier !== undefined) return earlier;
  const keys = { identity: generateNodeIdentity(), wireguard: generateWireGuardKeyPair() };
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, `${JSON.stringify({
    token_id: tokenId,
    secret_key: keys.identity.secret_key,
    wireguard_private_key: encodeBase64(keys.wireguard.private_key),
  })}\n`, 0o600);
  return keys;
}

/** Forgets the keys of an enrolment that finished, or that can no longer finish. */
export async function forgetEnrolmentKeys(stateDir: string): Promise<void> {
  await fs.rm(path.join(stateDir, PENDING_KEYS_FILE), { force: true });
}

async function readPending(file: string, tokenId: string): Promise<EnrolmentKeys | undefined> {
  try {
    const saved = JSON.parse(await fs.readFile(file, 'utf8')) as { token_id?: unknown; secret_key?: unknown; wireguard_private_key?: unknown };
    if (saved.token_id !== tokenId || typeof saved.secret_key !== 'string' || typeof saved.wireguard_private_key !== 'string') return undefined;
    const wireguardPrivate = decodeBase64(saved.wireguard_private_key);
    if (wireguardPrivate === undefined || wireguardPrivate.length !== 32) return undefined;
    const publicKey = publicKeyOf(saved.secret_key);
    return {
      identity: { public_key: publicKey, secret_key: saved.secret_key, nkey_public: nkeyPublicOf(publicKey) },
      wireguard: { public_key: encodeBase64(x25519PublicKey(wireguardPrivate)), private_key: wireguardPrivate },
    };
  } catch {
    // Missing or unreadable: an attempt with fresh keys is always possible.
    return undefined;
  }
}
