import { messageOf } from './message-of';

describe('messageOf', () => {
  test('gives an error\'s message without its name or stack', () => {
    expect(messageOf(new TypeError('disk full'))).toBe('disk full');
  });

  test('gives anything else thrown as text', () => {
    expect(messageOf('refused')).toBe('refused');
    expect(messageOf(42)).toBe('42');
    expect(messageOf(undefined)).toBe('undefined');
  });
});
