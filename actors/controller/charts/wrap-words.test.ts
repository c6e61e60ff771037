import { wrapWords } from './wrap-words';

describe('wrapWords', () => {
  test('fills each line with as many words as fit in the width', () => {
    expect(wrapWords('the slot restarts its child after a backoff', 16)).toEqual(['the slot', 'restarts its', 'child after a', 'backoff']);
  });

  test('gives a word longer than the width a line of its own, and drops runs of spaces', () => {
    expect(wrapWords('  a  xstate.done.actor.child  b ', 6)).toEqual(['a', 'xstate.done.actor.child', 'b']);
  });

  test('gives no line for empty text', () => {
    expect(wrapWords(' ', 10)).toEqual([]);
  });
});
