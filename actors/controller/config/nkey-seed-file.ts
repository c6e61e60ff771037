import { nkeyPublicOf, nkeySeedOf, publicKeyOf, readKeyFile } from '../../shared/crypto';

/** A broker user's key as read from its seed file: what to authenticate with, and who it is. */
export interface NkeyCredentials {
  /** The nkey seed text (`SU…`) as bytes, for the NATS client's nkeyAuthenticator. Secret. */
  seed: Uint8Array;
  /** The user's public nkey (`U…`), as the broker's user list names it. */
  nkey: string;
}

/**
 * Reads a broker user's key file: one base64 line holding a 32-byte Ed25519 seed, 0600 (the
 * same form as every other key file of the mesh). Refused when others can read it.
 */
export async function readNkeySeedFile(file: string): Promise<NkeyCredentials> {
  const raw = await readKeyFile(file, { bytes: 32, whenMissing: 'this key is made by mesh-control init; check --dir names the mesh directory' });
  return { seed: nkeySeedOf(raw), nkey: nkeyPublicOf(publicKeyOf(raw)) };
}
