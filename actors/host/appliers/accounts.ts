import { readFileSync, statSync } from 'node:fs';
import { ApplyFailed } from './applier';
import { errnoCode, errorText, resolveToReadUnderRoot } from './root-path';

// Owners and groups are declared by name or number and compared by number, because the
// machine stores numbers. Names are looked up in the machine's own /etc/passwd and /etc/group
// (under the root), not through the host process's name service: under a test root or an image
// being prepared, the process's accounts are another machine's. Accounts that exist only in a
// directory service (LDAP, systemd-homed) are therefore declared by number.

/** An owner or group as the machine stores it, with the name it was declared by, if any. */
export interface Account {
  id: number;
  /** The declared name; absent when the declaration gave a number. */
  name?: string;
}

/** A declared owner or group name that the machine's account files do not list. */
export class UnknownAccount extends ApplyFailed {
  /** `user` (from passwd) or `group` (from group). */
  readonly kind: 'user' | 'group';
  /** The declared name, as written. */
  readonly account: string;
  /** The file read, as a real path on this machine. */
  readonly file: string;
  constructor(kind: 'user' | 'group', account: string, file: string, fileMissing: boolean) {
    const where = fileMissing ? `${file} does not exist` : `it is not in ${file}`;
    super(
      `no ${kind} named ${JSON.stringify(account)}: ${where}; create the ${kind} first ` +
        `(a package or an action that adds it), or declare a numeric id`,
    );
    this.kind = kind;
    this.account = account;
    this.file = file;
  }
}

// The largest id chown accepts: (uid_t)-1 means "leave unchanged".
const MAX_ID = 4294967294;

/**
 * Resolves a declared owner (a name from `<root>/etc/passwd`, or a number) to a uid. With
 * `memo` (a pass's PassMemo accounts) a name found is reused for the rest of the pass.
 */
export function resolveUser(root: string, declared: string, memo?: Map<string, Account>): Promise<Account> {
  return remembered(memo, `user:${declared}`, () => resolveAccount(root, declared, 'user', '/etc/passwd'));
}

/** Resolves a declared group (a name from `<root>/etc/group`, or a number) to a gid; `memo` as for resolveUser. */
export function resolveGroup(root: string, declared: string, memo?: Map<string, Account>): Promise<Account> {
  return remembered(memo, `group:${declared}`, () => resolveAccount(root, declared, 'group', '/etc/group'));
}

// Only accounts found are kept: a name missing now may be added by a later resource of the pass.
async function remembered(memo: Map<string, Account> | undefined, key: string, resolveIt: () => Promise<Account>): Promise<Account> {
  const known = memo?.get(key);
  if (known !== undefined) return known;
  const account = await resolveIt();
  memo?.set(key, account);
  return account;
}

/** An account for a sentence: `0 (root)` when declared by name, `1000` when by number. */
export function describeAccount(account: Account): string {
  return account.name === undefined ? String(account.id) : `${account.id} (${account.name})`;
}

async function resolveAccount(root: string, declared: string, kind: 'user' | 'group', file: string): Promise<Account> {
  if (/^[0-9]+$/.test(declared)) {
    const id = Number(declared);
    if (id > MAX_ID) throw new ApplyFailed(`${kind} id ${declared} is out of range (0-${MAX_ID}); declare a real id or a name`);
    return { id };
  }
  const real = resolveToReadUnderRoot(root, file);
  let ids: ReadonlyMap<string, number> | undefined;
  try {
    ids = accountIds(real);
  } catch (error) {
    throw new ApplyFailed(`cannot read ${real} to find ${kind} ${JSON.stringify(declared)}: ${errorText(error)}`, { cause: error });
  }
  const id = ids?.get(declared);
  if (id !== undefined) return { id, name: declared };
  // Id 0 is root on every Linux; a minimal image or a bare test root without account files
  // still takes the default owner and group.
  if (declared === 'root') return { id: 0, name: declared };
  throw new UnknownAccount(kind, declared, real, ids === undefined);
}

interface ParsedAccounts {
  /** What identifies this version of the file: a rewrite (useradd renames a new file in) changes it. */
  version: string;
  ids: ReadonlyMap<string, number>;
}

// Every file and directory looks up its owner and group: a pass over a thousand files would read
// and split /etc/passwd two thousand times. The parsed names are kept per file and read again
// whenever the file's inode, size or modification time says it changed.
const parsed = new Map<string, ParsedAccounts>();

/** The names and ids in an account file, or undefined when it does not exist. */
function accountIds(real: string): ReadonlyMap<string, number> | undefined {
  const stats = statSync(real, { throwIfNoEntry: false, bigint: true });
  if (stats === undefined) {
    parsed.delete(real);
    return undefined;
  }
  const version = `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
  const known = parsed.get(real);
  if (known?.version === version) return known.ids;
  let text: string;
  try {
    text = readFileSync(real, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  const ids = idsIn(text);
  parsed.set(real, { version, ids });
  return ids;
}

// passwd is name:password:uid:…, group is name:password:gid:…; the id is the third field in both.
// The first line naming an account wins, as it does for getpwnam.
function idsIn(text: string): Map<string, number> {
  const ids = new Map<string, number>();
  for (const line of text.split('\n')) {
    // NIS compat entries (+name, -name) name no local id.
    if (line === '' || line.startsWith('#') || line.startsWith('+') || line.startsWith('-')) continue;
    const fields = line.split(':');
    const name = fields[0] ?? '';
    if (fields.length < 3 || ids.has(name)) continue;
    const id = fields[2] ?? '';
    if (/^[0-9]+$/.test(id) && Number(id) <= MAX_ID) ids.set(name, Number(id));
  }
  return ids;
}
