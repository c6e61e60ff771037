import fc from 'fast-check';
import { utcTimestamp } from './utc-timestamp';

describe('utcTimestamp', () => {
  it('writes every time toISOString writes, from 0000 to 9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.parse('0000-01-01T00:00:00.000Z'), max: Date.parse('9999-12-31T23:59:59.999Z') }), (ms) => {
        expect(utcTimestamp(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('gets the edges of days, leap years and the epoch right', () => {
    const edges = ['1970-01-01T00:00:00.000Z', '1969-12-31T23:59:59.999Z', '2000-02-29T12:00:00.000Z', '1900-03-01T00:00:00.000Z', '2100-02-28T23:59:59.999Z', '2026-12-01T19:47:36.312Z', '0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'];
    for (const edge of edges) expect(utcTimestamp(new Date(edge))).toBe(edge);
  });

  it('leaves years outside four digits to toISOString and refuses an invalid date as it does', () => {
    expect(utcTimestamp(Date.parse('+010000-01-01T00:00:00.000Z'))).toBe('+010000-01-01T00:00:00.000Z');
    expect(utcTimestamp(-62_198_755_200_001)).toBe(new Date(-62_198_755_200_001).toISOString());
    expect(() => utcTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });
});
