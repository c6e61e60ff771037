/**
 * Strict base64: a text decodes only if it is the one canonical spelling of its bytes (padding
 * present and unused bits zero). Node's own decoder skips characters it does not know, so two
 * different texts could stand for the same key or signature; here they cannot.
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? new Uint8Array(bytes) : undefined;
}

/** Standard padded base64, the form every key, signature and payload takes on the wire. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Strict unpadded base64url, decoded only from its canonical spelling (see `decodeBase64`). */
export function decodeBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? new Uint8Array(bytes) : undefined;
}

/** Unpadded base64url: safe in a URL, a file name and a NATS configuration string. */
export function encodeBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}
