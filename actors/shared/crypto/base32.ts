/**
 * Base32 encoding over any 32-symbol alphabet (RFC 4648's for nkeys, Crockford's for tokens):
 * bytes are read most significant bit first, five bits a symbol, and the last symbol is padded
 * with zero bits. No '=' padding is written: neither nkeys nor tokens use it.
 */
export function encodeBase32(bytes: Uint8Array, alphabet: string): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(buffer >> bits) & 31];
    }
  }
  if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
  return out;
}
