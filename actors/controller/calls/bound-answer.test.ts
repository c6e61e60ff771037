import { boundAnswer } from './bound-answer';

describe('boundAnswer', () => {
  test('keeps an answer that fits whole', () => {
    expect(boundAnswer({ text: 'issued', result: { token: 'x' } }, 1_000)).toEqual({ text: 'issued', result: { token: 'x' }, truncated: false });
  });

  test('cuts the text of an answer that does not fit, leaves the result out and says how much went', () => {
    const text = `${'line of output\n'.repeat(2_000)}the end`;
    const kept = boundAnswer({ text, result: { lines: 2_000 } }, 4_096);
    expect(kept.truncated).toBe(true);
    expect(kept.result).toBeNull();
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(4_096);
    expect(text.startsWith(kept.text.split('\n…')[0] as string)).toBe(true);
    expect(kept.text).toMatch(/… \(cut: \d+ more bytes of text, and the result, were not kept\)$/);
  });

  test('stays within the bound for text that JSON escapes heavily', () => {
    const kept = boundAnswer({ text: '"\\\u0001'.repeat(10_000), result: null }, 2_048);
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(2_048);
    expect(kept.truncated).toBe(true);
  });
});
