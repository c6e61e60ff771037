import { firstFreeAddress, overlayPool, poolHolds } from './overlay-pool';

describe('the overlay address pool', () => {
  test('gives the first host address of an empty pool, never the network address', () => {
    expect(firstFreeAddress(overlayPool('10.77.0.0/16'), [])).toBe('10.77.0.1');
  });

  test('gives the lowest address not taken, filling a gap before going higher', () => {
    const pool = overlayPool('10.77.0.0/24');
    expect(firstFreeAddress(pool, ['10.77.0.1', '10.77.0.3'])).toBe('10.77.0.2');
    expect(firstFreeAddress(pool, ['10.77.0.1', '10.77.0.2', '10.77.0.3'])).toBe('10.77.0.4');
  });

  test('crosses an octet boundary', () => {
    const pool = overlayPool('10.77.0.0/16');
    const taken = Array.from({ length: 255 }, (_, i) => `10.77.0.${i + 1}`);
    expect(firstFreeAddress(pool, taken)).toBe('10.77.1.0');
  });

  test('says a full pool is full, and never offers the broadcast address', () => {
    const pool = overlayPool('192.168.5.0/30');
    expect(firstFreeAddress(pool, ['192.168.5.1'])).toBe('192.168.5.2');
    expect(firstFreeAddress(pool, ['192.168.5.1', '192.168.5.2'])).toBeUndefined();
  });

  test('reads a pool written with host bits set as its network', () => {
    expect(firstFreeAddress(overlayPool('10.77.3.9/16'), [])).toBe('10.77.0.1');
  });

  test('ignores taken addresses outside the pool (a pool that was changed)', () => {
    const pool = overlayPool('10.88.0.0/24');
    expect(firstFreeAddress(pool, ['10.77.0.1', 'not an address'])).toBe('10.88.0.1');
    expect(poolHolds(pool, '10.77.0.1')).toBe(false);
    expect(poolHolds(pool, '10.88.0.254')).toBe(true);
    expect(poolHolds(pool, '10.88.0.255')).toBe(false);
  });

  test('refuses something that is not an IPv4 pool', () => {
    expect(() => overlayPool('fd00::/64')).toThrow(RangeError);
    expect(() => overlayPool('10.0.0.0/32')).toThrow(RangeError);
  });
});
