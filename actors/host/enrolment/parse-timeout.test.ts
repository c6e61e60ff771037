import { parseTimeout, TimeoutInvalid } from './parse-timeout';

describe('--timeout', () => {
  test.each([
    ['30s', 30_000],
    ['2m', 120_000],
    ['500ms', 500],
    ['45', 45_000],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseTimeout(text)).toBe(ms);
  });

  test.each(['', 'soon', '-5s', '1.5s', '0s', '2h', '61m'])('refuses %j, saying what a duration looks like', (text) => {
    expect(() => parseTimeout(text)).toThrow(TimeoutInvalid);
    expect(() => parseTimeout(text)).toThrow(/expected a duration like 30s, 2m or 500ms/);
  });
});
