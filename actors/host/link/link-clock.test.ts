import { LinkClock } from './link-clock';

const at = (seconds: number) => new Date(Date.UTC(2026, 7, 27, 14, 0, seconds));

describe('how long since the host was linked', () => {
  test('a host that has never been linked says null until it is', () => {
    const clock = new LinkClock(null);
    expect(clock.secondsSinceLinked(at(0))).toBeNull();
    clock.up(at(5));
    expect(clock.secondsSinceLinked(at(6))).toBe(0);
    expect(clock.lastLinkedAt()).toEqual(at(5));
  });

  test('the first report after the link returns says how long the host was away, the next ones say 0', () => {
    const clock = new LinkClock(at(0));
    clock.up(at(600));
    expect(clock.secondsSinceLinked(at(601))).toBe(600);
    expect(clock.secondsSinceLinked(at(700))).toBe(0);
  });

  test('while unlinked, a report says the time since the link was last known to work', () => {
    const clock = new LinkClock(null);
    clock.up(at(0));
    clock.down(at(30));
    expect(clock.lastLinkedAt()).toEqual(at(30));
    expect(clock.secondsSinceLinked(at(90))).toBe(60);
    clock.up(at(120));
    expect(clock.secondsSinceLinked(at(121))).toBe(90);
  });

  test('a second "up" while linked does not restart the absence', () => {
    const clock = new LinkClock(at(0));
    clock.up(at(100));
    clock.up(at(200));
    expect(clock.secondsSinceLinked(at(201))).toBe(100);
  });

  test('the absence before the current link can be read for a heartbeat without taking it from the next report', () => {
    const clock = new LinkClock(at(0));
    expect(clock.absenceBeforeLink()).toBe(0);
    clock.up(at(600));
    expect(clock.absenceBeforeLink()).toBe(600);
    expect(clock.absenceBeforeLink()).toBe(600);
    expect(clock.secondsSinceLinked(at(601))).toBe(600);
    clock.down(at(700));
    expect(clock.absenceBeforeLink()).toBe(0);
  });
});
