import { DashboardSessions, LOGIN_LINK_TTL_MS, SESSION_TTL_MS, sessionCookie, sessionFromCookie } from './dashboard-sessions';

/** A clock the test moves by hand. */
class FakeClock {
  at = 1_700_000_000_000;
  readonly now = (): number => this.at;
}

test('a login secret is exchanged for a session once, and the session is held', () => {
  const sessions = new DashboardSessions();
  const secret = sessions.issueLogin();
  const first = sessions.login(secret);
  expect(first.ok).toBe(true);
  if (!first.ok) return;
  expect(sessions.holds(first.session)).toBe(true);
  expect(sessions.login(secret)).toEqual({ ok: false, why: 'used' });
});

test('a secret that was never issued, or is a session id, does not log in; a secret is not a session', () => {
  const sessions = new DashboardSessions();
  const secret = sessions.issueLogin();
  expect(sessions.login('made-up')).toEqual({ ok: false, why: 'unknown' });
  expect(sessions.holds(secret)).toBe(false);
  const outcome = sessions.login(secret);
  if (!outcome.ok) throw new Error('the issued secret did not log in');
  expect(sessions.login(outcome.session)).toEqual({ ok: false, why: 'unknown' });
  expect(sessions.holds(undefined)).toBe(false);
  expect(sessions.holds('')).toBe(false);
});

test('a login secret expires unused, and a session ends after its time', () => {
  const clock = new FakeClock();
  const sessions = new DashboardSessions(clock.now);
  const late = sessions.issueLogin();
  const timely = sessions.issueLogin();
  const outcome = sessions.login(timely);
  if (!outcome.ok) throw new Error('the issued secret did not log in');
  clock.at += LOGIN_LINK_TTL_MS;
  expect(sessions.login(late)).toEqual({ ok: false, why: 'expired' });
  expect(sessions.holds(outcome.session)).toBe(true);
  clock.at += SESSION_TTL_MS;
  expect(sessions.holds(outcome.session)).toBe(false);
});

test('the session cookie cannot be read by script and is sent only from the dashboard\'s own pages', () => {
  const cookie = sessionCookie('abc');
  expect(cookie).toMatch(/^mesh_dashboard=abc; /);
  expect(cookie).toContain('HttpOnly');
  expect(cookie).toContain('SameSite=Strict');
  expect(sessionFromCookie('other=1; mesh_dashboard=abc=; x=y')).toBe('abc=');
  expect(sessionFromCookie('other=1')).toBeUndefined();
  expect(sessionFromCookie(undefined)).toBeUndefined();
});
