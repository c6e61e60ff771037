import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// AES-256-GCM from Node's OpenSSL: the store encryption needs no libsodium, which the controller
// loads only to seal to a node. The secret's module, name and version are the associated data,
// so a ciphertext moved onto another row (or an older version) does not open there.

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Encrypts `value` under `key`, bound to `binding` ("module/name/version"); base64. */
export function encryptSecret(value: Uint8Array, key: Uint8Array, binding: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(binding, 'utf8'));
  const body = Buffer.concat([cipher.update(value), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
}

/** Decrypts what encryptSecret made; throws when the key, the binding or a byte differs. */
export function decryptSecret(ciphertext: string, key: Uint8Array, binding: string): Buffer {
  const bytes = Buffer.from(ciphertext, 'base64');
  if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new Error('the stored value is shorter than any encrypted value');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES));
  decipher.setAAD(Buffer.from(binding, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
}
