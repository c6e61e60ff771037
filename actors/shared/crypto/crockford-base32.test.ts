import * as fc from 'fast-check';
import { CROCKFORD_ALPHABET, decodeCrockford, encodeCrockford, groupForReading } from './crockford-base32';

describe('Crockford base32', () => {
  it('decodes what it encodes, for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const decoded = decodeCrockford(encodeCrockford(bytes));
        return decoded.kind === 'bytes' && decoded.tidy && Buffer.from(decoded.bytes).equals(Buffer.from(bytes));
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('uses no I, L, O or U, and writes upper case', () => {
    expect(CROCKFORD_ALPHABET).toHaveLength(32);
    expect(CROCKFORD_ALPHABET).not.toMatch(/[ILOU]/);
    expect(encodeCrockford(Uint8Array.from({ length: 40 }, (_, i) => i * 37))).toMatch(/^[0-9A-HJKMNP-TV-Z]+$/);
  });

  it('reads lower case, O as 0, I and L as 1, and skips separators and white space', () => {
    const bytes = Uint8Array.from([0, 1, 2, 250, 251, 252, 253]);
    const text = encodeCrockford(bytes);
    const sloppy = groupForReading(text, 3).toLowerCase().replace(/0/g, 'o').replace(/1/g, 'l').replace(/-/, ' \n');
    const decoded = decodeCrockford(sloppy);
    expect(decoded.kind === 'bytes' && Buffer.from(decoded.bytes).equals(Buffer.from(bytes))).toBe(true);
  });

  it('reports the first character it does not know, with its index', () => {
    expect(decodeCrockford('0123U56')).toEqual({ kind: 'foreign', character: 'U', index: 4 });
    expect(decodeCrockford('01-2*')).toEqual({ kind: 'foreign', character: '*', index: 4 });
  });

  it('says when the last symbol carries bits an encoder would have left zero', () => {
    // One byte is two symbols with two padding bits; "01" sets the last of them.
    expect(decodeCrockford('00')).toMatchObject({ kind: 'bytes', tidy: true });
    expect(decodeCrockford('01')).toMatchObject({ kind: 'bytes', tidy: false });
    // Three symbols can never come from whole bytes.
    expect(decodeCrockford('000')).toMatchObject({ kind: 'bytes', tidy: false });
  });

  it('groups text for reading aloud', () => {
    expect(groupForReading('ABCDEFGHJKMNP')).toBe('ABCDEF-GHJKMN-P');
    expect(groupForReading('')).toBe('');
  });
});
