import { retryDelay } from './retry-delay';

const policy = { firstMs: 1000, capMs: 60_000 };

describe('the wait between attempts to reach the broker', () => {
  test('doubles from the first wait', () => {
    expect([1, 2, 3, 4].map((failures) => retryDelay(failures, policy, () => 0))).toEqual([1000, 2000, 4000, 8000]);
  });

  test('never exceeds the cap however many attempts failed', () => {
    expect(retryDelay(7, policy, () => 0)).toBe(60_000);
    expect(retryDelay(10_000, policy, () => 0)).toBe(60_000);
  });

  test('is jittered down by up to half, never up', () => {
    expect(retryDelay(3, policy, () => 0.999_999)).toBe(2000);
    expect(retryDelay(3, policy, () => 0.5)).toBe(3000);
  });
});
