import path from 'node:path';
import { encodeBase64 } from '../../shared/crypto/base64';
import { writeKeyFile } from '../../shared/crypto/key-file';
import { generateX25519KeyPair } from '../../shared/crypto/x25519';

/** The WireGuard private key's file name in the state directory. */
export const WIREGUARD_KEY_FILE = 'wireguard.key';

/** A WireGuard (X25519) key pair: the public half as WireGuard writes it, the private half as bytes. */
export interface WireGuardKeyPair {
  public_key: string;
  private_key: Uint8Array;
}

/**
 * A fresh WireGuard key pair, made on this machine: the overlay is assigned centrally, but only
 * the public half ever leaves the machine (it goes up with the enrolment request).
 */
export function generateWireGuardKeyPair(): WireGuardKeyPair {
  const pair = generateX25519KeyPair();
  return { public_key: encodeBase64(pair.publicKey), private_key: pair.privateKey };
}

/**
 * Writes the private key as one base64 line, mode 0600, replacing an older one (a re-enrolled
 * node publishes a new public key). Returns the file's path.
 */
export async function writeWireGuardKey(stateDir: string, privateKey: Uint8Array): Promise<string> {
  const file = path.join(stateDir, WIREGUARD_KEY_FILE);
  await writeKeyFile(file, privateKey, { overwrite: true });
  return file;
}
