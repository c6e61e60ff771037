import { and, not, stateIn } from 'xstate';
import { delayText, eventText, guardText } from './transition-text';

describe('transition text', () => {
  test('names invoke outcomes, delays and eventless transitions for a person', () => {
    expect(eventText('operator.enrol')).toBe('operator.enrol');
    expect(eventText('xstate.done.actor.enrol')).toBe('enrol.done');
    expect(eventText('xstate.error.actor.release')).toBe('release.error');
    expect(eventText('xstate.after.releaseRetryDelay.lifecycle.enrolled.retrying')).toBe('after releaseRetryDelay');
    expect(eventText('xstate.after.5000.job.working')).toBe('after 5 s');
    expect(eventText('')).toBe('always');
  });

  test('writes delays in the unit a person would say', () => {
    expect(delayText(250)).toBe('250 ms');
    expect(delayText(1500)).toBe('1.5 s');
    expect(delayText(120_000)).toBe('2 min');
    expect(delayText('backoff')).toBe('backoff');
  });

  test('reads guards, combined ones included', () => {
    expect(guardText('hasAttemptsLeft')).toBe('hasAttemptsLeft');
    expect(guardText({ type: 'isNewerEpoch', params: { by: 1 } })).toBe('isNewerEpoch');
    expect(guardText(and(['isRetryable', not('isHalted')]))).toBe('isRetryable and (not isHalted)');
    expect(guardText(stateIn('#lifecycle.enrolled'))).toBe('in lifecycle.enrolled');
    expect(guardText(function isLate() { return true; })).toBe('isLate');
  });
});
