import * as fc from 'fast-check';
import { encodeBase32 } from './base32';

const RFC4648 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

describe('encodeBase32', () => {
  it('spells the test vectors of RFC 4648 section 10, without the padding', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ];
    for (const [text, expected] of vectors) expect(encodeBase32(new TextEncoder().encode(text), RFC4648)).toBe(expected);
  });

  it('writes every five bits as the symbol at that place in the given alphabet, the last padded with zeros, for any bytes', () => {
    const shuffled = [...RFC4648].reverse().join('');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 48 }), (bytes) => {
        const bits = [...bytes].map((byte) => byte.toString(2).padStart(8, '0')).join('');
        const symbols = (bits + '0'.repeat((5 - (bits.length % 5)) % 5)).match(/.{5}/g) ?? [];
        return encodeBase32(bytes, shuffled) === symbols.map((group) => shuffled[parseInt(group, 2)]).join('');
      }),
      { numRuns: 200, seed: 11 },
    );
  });
});
