import { SilenceDurationInvalid } from './condition-errors';
import { SILENCE_MAX_MS } from './condition-store';
import { parseSilenceFor } from './parse-silence-for';

describe('parseSilenceFor', () => {
  test('reads a whole number and one unit, up to a week', () => {
    expect(parseSilenceFor('30m')).toBe(30 * 60_000);
    expect(parseSilenceFor('2h')).toBe(2 * 3_600_000);
    expect(parseSilenceFor(' 3d ')).toBe(3 * 86_400_000);
    expect(parseSilenceFor('1w')).toBe(SILENCE_MAX_MS);
    expect(parseSilenceFor('168h')).toBe(SILENCE_MAX_MS);
  });

  test.each([
    ['8d', 'longer than a week'],
    ['169h', 'longer than a week'],
    ['2w', 'longer than a week'],
    ['0m', 'shorter than a minute'],
    ['forever', 'is not a duration'],
    ['-1h', 'is not a duration'],
    ['1.5h', 'is not a duration'],
    ['', 'is not a duration'],
    ['30s', 'is not a duration'],
  ])('refuses %j whole, quoting it: %s', (given, why) => {
    const error = (() => {
      try {
        return parseSilenceFor(given);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(SilenceDurationInvalid);
    expect((error as SilenceDurationInvalid).message).toContain(why);
    expect((error as SilenceDurationInvalid).value).toBe(given);
    expect((error as SilenceDurationInvalid).next).toMatch(/--for 2h/);
  });
});
