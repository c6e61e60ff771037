import { OperatorError } from '../../shared/operator-error';

/**
 * The embedded store's directory is held by another process. PGlite has no locking of its own,
 * and two processes writing one data directory would corrupt it, so the second is refused.
 */
export class StoreInUse extends OperatorError {
  constructor(dataDir: string, holder: number, lockFile: string) {
    super(`the embedded store is open in another process (pid ${holder})`, {
      value: dataDir,
      next: `stop that process first (is \`mesh-control serve\` running on this directory?); if pid ${holder} is not a mesh-control process, remove ${lockFile} and try again. Several controllers need PostgreSQL: --database postgres://…`,
      retryable: true,
    });
  }
}

/** The embedded store could not be created or opened in its directory. */
export class StoreOpenFailed extends OperatorError {
  constructor(dataDir: string, cause: unknown) {
    super(`the embedded store could not be opened (${describe(cause)})`, {
      value: dataDir,
      next: 'check that the directory is writable by this user and the disk has room (a new store takes about 40 MB); restore it from a backup if it was damaged',
      cause,
    });
  }
}

/** The `--database` value is not a PostgreSQL address. */
export class StoreUrlInvalid extends OperatorError {
  constructor(url: string) {
    super('the database address is not a PostgreSQL URL', {
      value: redactPassword(url),
      next: 'give it as postgres://USER:PASSWORD@HOST:5432/DATABASE (or postgresql://…); leave --database out to use the embedded store',
    });
  }
}

/**
 * PostgreSQL did not answer at open: down, unreachable, or refusing these credentials.
 * Retryable unless the server said the credentials or the database are wrong.
 */
export class StoreUnreachable extends OperatorError {
  constructor(url: string, cause: unknown) {
    const code = (cause as { code?: unknown } | undefined)?.code;
    // 28xxx: invalid authorization; 3D000: no such database. Waiting will not fix either.
    const final = typeof code === 'string' && (code.startsWith('28') || code === '3D000');
    super(`PostgreSQL did not accept a connection (${describe(cause)})`, {
      value: redactPassword(url),
      next: final
        ? 'check the user, password and database name in --database; create the database first if it does not exist (createdb)'
        : 'check that PostgreSQL is running and reachable from this machine (pg_isready -d URL), then start again',
      cause,
      retryable: !final,
    });
  }
}

/** The URL as it may be printed: any password replaced by `***`. */
export function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}

function describe(cause: unknown): string {
  if (cause instanceof AggregateError && cause.errors.length > 0) return describe(cause.errors[0]);
  if (cause instanceof Error) return cause.message;
  return String(cause);
}
