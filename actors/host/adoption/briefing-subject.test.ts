import { briefingSubject, MAX_SUBJECT } from './briefing-subject';

describe('briefingSubject', () => {
  test('is the resource key when it fits', () => {
    expect(briefingSubject('file:/etc/docker/daemon.json')).toBe('file:/etc/docker/daemon.json');
    const exact = `file:/${'x'.repeat(MAX_SUBJECT - 6)}`;
    expect(briefingSubject(exact)).toBe(exact);
  });

  test('keeps the beginning and the end of a longer key and drops the middle', () => {
    const key = `file:/srv/${'m'.repeat(300)}/the-name.conf`;
    const subject = briefingSubject(key);
    expect(subject).toHaveLength(MAX_SUBJECT);
    expect(subject.startsWith('file:/srv/mmm')).toBe(true);
    expect(subject.endsWith('mmm/the-name.conf')).toBe(true);
    expect(subject.split('…')).toHaveLength(2);
  });
});
