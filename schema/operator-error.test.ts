import { OperatorError, quote } from './operator-error';

class TokenExpired extends OperatorError {}

describe('OperatorError', () => {
  test('says what happened, quotes the value and names the next step', () => {
    const error = new TokenExpired('the token expired at 10:15', { value: 'ab12', next: 'issue a new one: mesh-control token issue --new' });
    expect(error.toText()).toBe('error: the token expired at 10:15: "ab12"\nnext:  issue a new one: mesh-control token issue --new\n');
    expect(error.name).toBe('TokenExpired');
    expect(error).toBeInstanceOf(OperatorError);
  });

  test('its JSON form names the condition so scripts can branch on it', () => {
    const error = new TokenExpired('expired', { next: 'issue another', retryable: false, exitCode: 4 });
    expect(error.toJSON()).toEqual({ error: { condition: 'TokenExpired', what: 'expired', next: 'issue another', retryable: false } });
    expect(error.exitCode).toBe(4);
  });

  test('a pasted blob is shortened when quoted', () => {
    expect(quote('x'.repeat(500))).toMatch(/… \(500 characters\)"$/);
  });
});
