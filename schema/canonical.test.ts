import { canonicalJson, digestOf } from './canonical';

describe('canonical JSON', () => {
  test('gives the same bytes whatever order the keys were written in', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: 'x' } })).toBe(canonicalJson({ a: { c: 'x', d: [1, 2] }, b: 1 }));
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });

  test('drops undefined members so an absent optional field and a missing one sign alike', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  test('refuses values JSON cannot carry faithfully, naming where they are', () => {
    expect(() => canonicalJson({ a: [1, Number.NaN] })).toThrow('$.a[1]');
    expect(() => canonicalJson({ big: BigInt(1) })).toThrow('bigint at $.big');
  });

  test('digests differ when content differs and agree when only key order does', () => {
    expect(digestOf({ a: 1, b: 2 })).toBe(digestOf({ b: 2, a: 1 }));
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: 2 }));
    expect(digestOf({})).toMatch(/^[0-9a-f]{64}$/);
  });
});
