import { formatLastSeen } from './format-last-seen';
import { formatSpan } from './format-span';

const now = new Date('2026-08-31T12:00:00Z');
const ago = (ms: number): Date => new Date(now.getTime() - ms);

describe('formatLastSeen', () => {
  test('says how long ago a node was heard from, in the unit a person reads at a glance', () => {
    expect(formatLastSeen(ago(12_000), now)).toBe('last seen 12 s ago');
    expect(formatLastSeen(ago(4 * 60_000 + 59_000), now)).toBe('last seen 4 min ago');
    expect(formatLastSeen(ago(3 * 3_600_000), now)).toBe('last seen 3 h ago');
    expect(formatLastSeen(ago(4 * 86_400_000 + 3_600_000), now)).toBe('last seen 4 days ago');
  });

  test('says "never seen" of a node the mesh has not heard from', () => {
    expect(formatLastSeen(null, now)).toBe('never seen');
  });

  test('reads a time ahead of the controller\'s clock as just now, not as a negative age', () => {
    expect(formatLastSeen(new Date(now.getTime() + 5000), now)).toBe('last seen 0 s ago');
  });

  test('states a three-week absence as a fact, with no word of alarm', () => {
    const text = formatLastSeen(ago(21 * 86_400_000), now);
    expect(text).toBe('last seen 21 days ago');
    expect(text).not.toMatch(/offline|stale|lost|down|warn|!/i);
  });
});

describe('formatSpan', () => {
  test('rounds down at every unit boundary, so it never says more time has passed than has', () => {
    expect(formatSpan(59_999)).toBe('59 s');
    expect(formatSpan(60_000)).toBe('1 min');
    expect(formatSpan(3_599_999)).toBe('59 min');
    expect(formatSpan(3_600_000)).toBe('1 h');
    expect(formatSpan(47 * 3_600_000 + 3_599_999)).toBe('47 h');
    expect(formatSpan(48 * 3_600_000)).toBe('2 days');
  });
});
