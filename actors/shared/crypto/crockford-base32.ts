import { encodeBase32 } from './base32';

/** Crockford's base32 symbols: digits and upper-case letters without I, L, O and U. */
export const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

const VALUES: ReadonlyMap<string, number> = (() => {
  const values = new Map<string, number>();
  [...CROCKFORD_ALPHABET].forEach((symbol, value) => {
    values.set(symbol, value);
    values.set(symbol.toLowerCase(), value);
  });
  // Crockford's reading rules: the letters people confuse with digits decode as those digits.
  for (const [symbol, value] of [['O', 0], ['I', 1], ['L', 1]] as const) {
    values.set(symbol, value);
    values.set(symbol.toLowerCase(), value);
  }
  return values;
})();

/** Encodes bytes most significant bit first; the last symbol is padded with zero bits. */
export function encodeCrockford(bytes: Uint8Array): string {
  return encodeBase32(bytes, CROCKFORD_ALPHABET);
}

/** What decoding found: the bytes, or the first character that is not a symbol. */
export type CrockfordDecoded =
  | {
      kind: 'bytes';
      bytes: Uint8Array;
      /** Symbols read (separators not counted). */
      symbols: number;
      /** True when the symbols end exactly as `encodeCrockford` would end them: fewer than five leftover bits, all zero. */
      tidy: boolean;
    }
  | { kind: 'foreign'; character: string; index: number };

/**
 * Decodes Crockford base32 the forgiving way a person needs: any case, O read as 0, I and L as
 * 1, and '-' and white space ignored wherever they are. Any other character is reported with
 * its index in `text`.
 */
export function decodeCrockford(text: string): CrockfordDecoded {
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  let symbols = 0;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index] as string;
    if (character === '-' || /\s/.test(character)) continue;
    const value = VALUES.get(character);
    if (value === undefined) return { kind: 'foreign', character: String.fromCodePoint(text.codePointAt(index) as number), index };
    symbols += 1;
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((buffer >> bits) & 0xff);
    }
  }
  const tidy = bits < 5 && (buffer & ((1 << bits) - 1)) === 0;
  return { kind: 'bytes', bytes: Uint8Array.from(out), symbols, tidy };
}

/** Splits text into groups of `size` joined by '-', so it can be read aloud and compared by eye. */
export function groupForReading(text: string, size = 6): string {
  const groups: string[] = [];
  for (let start = 0; start < text.length; start += size) groups.push(text.slice(start, start + size));
  return groups.join('-');
}
