import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long the printed login link may be used (once): long enough to copy it into a browser. */
export const LOGIN_LINK_TTL_MS = 15 * 60 * 1000;
/** How long a browser's session lasts; the operator logs in again with a new link after it. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** The session cookie's name. */
export const SESSION_COOKIE = 'mesh_dashboard';

/** What a login attempt came to. */
export type LoginOutcome = { ok: true; session: string } | { ok: false; why: 'unknown' | 'used' | 'expired' };

/**
 * The dashboard's credentials, kept in memory only: one-time login secrets (what the verb
 * prints in a link), and the sessions they were exchanged for (what the browser holds in an
 * HttpOnly cookie). Only hashes are kept, and compared in constant time, so neither a heap
 * dump nor a timing difference gives a usable secret. Time comes from `now`, for tests.
 */
export class DashboardSessions {
  readonly #logins = new Map<string, { expires: number; used: boolean }>();
  readonly #sessions = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A new one-time login secret (URL-safe), valid for {@link LOGIN_LINK_TTL_MS}. */
  issueLogin(): string {
    const secret = randomBytes(32).toString('base64url');
    this.#logins.set(digest(secret).toString('hex'), { expires: this.#now() + LOGIN_LINK_TTL_MS, used: false });
    return secret;
  }

  /** Exchanges a login secret for a new session id; a secret works once, before it expires. */
  login(secret: string): LoginOutcome {
    const key = findKey(this.#logins.keys(), secret);
    const entry = key === undefined ? undefined : this.#logins.get(key);
    if (key === undefined || entry === undefined) return { ok: false, why: 'unknown' };
    if (entry.used) return { ok: false, why: 'used' };
    if (entry.expires <= this.#now()) return { ok: false, why: 'expired' };
    entry.used = true;
    const session = randomBytes(32).toString('base64url');
    this.#sessions.set(digest(session).toString('hex'), this.#now() + SESSION_TTL_MS);
    return { ok: true, session };
  }

  /** True when `session` is a live session id. */
  holds(session: string | undefined): boolean {
    if (session === undefined || session === '') return false;
    const key = findKey(this.#sessions.keys(), session);
    if (key === undefined) return false;
    const expires = this.#sessions.get(key) ?? 0;
    if (expires > this.#now()) return true;
    this.#sessions.delete(key);
    return false;
  }
}

/** The session id in a request's Cookie header, if any. */
export function sessionFromCookie(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=');
  }
  return undefined;
}

/** The Set-Cookie value for a session: not readable from script, sent only from this site's own pages. */
export function sessionCookie(session: string): string {
  return `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

// Every key is compared, whether or not one matched already, so how long it takes says nothing.
function findKey(keys: Iterable<string>, secret: string): string | undefined {
  const wanted = digest(secret);
  let found: string | undefined;
  for (const key of keys) {
    if (timingSafeEqual(Buffer.from(key, 'hex'), wanted)) found = key;
  }
  return found;
}
