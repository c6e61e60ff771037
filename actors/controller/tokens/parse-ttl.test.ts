import { MAX_TOKEN_TTL_MS, MIN_TOKEN_TTL_MS, parseTtl } from './parse-ttl';
import { TokenTtlInvalid } from './token-errors';

describe('parseTtl', () => {
  test('reads seconds, minutes, hours and days', () => {
    expect(parseTtl('90s')).toBe(90_000);
    expect(parseTtl('15m')).toBe(15 * 60_000);
    expect(parseTtl('2h')).toBe(2 * 3_600_000);
    expect(parseTtl('1d')).toBe(86_400_000);
  });

  test('takes 1m and 7d, the bounds themselves', () => {
    expect(parseTtl('1m')).toBe(MIN_TOKEN_TTL_MS);
    expect(parseTtl('7d')).toBe(MAX_TOKEN_TTL_MS);
    expect(parseTtl('60s')).toBe(MIN_TOKEN_TTL_MS);
  });

  test('refuses a token shorter than a minute or longer than a week, saying which bound it broke', () => {
    expect(() => parseTtl('30s')).toThrow(/shorter than 1 minute/);
    expect(() => parseTtl('8d')).toThrow(/longer than 7 days/);
    expect(() => parseTtl('169h')).toThrow(TokenTtlInvalid);
  });

  test('refuses what is not a number and one unit, quoting it', () => {
    for (const text of ['15', '15 minutes', '1h30m', '-5m', '1.5h', 'm', '', '15M']) {
      let refusal: unknown;
      try {
        parseTtl(text);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(TokenTtlInvalid);
      expect((refusal as TokenTtlInvalid).value).toBe(text);
    }
  });
});
