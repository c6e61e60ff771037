import { promises as fs } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { renderAuthFile, type BrokerUser } from '../broker/auth-file';
import { brokerPaths } from '../broker/broker-paths';

/**
 * The file beside the broker's auth.conf holding the same users as data, 0600. nats-server
 * reads auth.conf; the controller reads this one back when it starts, because an enrolment
 * user's password is derived from a token secret the store keeps only as a hash, so the list
 * cannot be made again from the store alone.
 */
export function brokerUserListFile(brokerDir: string): string {
  return path.join(path.resolve(brokerDir), 'users.json');
}

/**
 * Writes the broker's user list: first the data file, then auth.conf (both atomic, 0600). The
 * auth file is rendered before either is written, so a list renderAuthFile refuses changes
 * nothing. The broker reads the new list at its next reload.
 */
export async function writeBrokerUserList(brokerDir: string, users: readonly BrokerUser[]): Promise<void> {
  const rendered = renderAuthFile(users);
  await writeFileAtomic(brokerUserListFile(brokerDir), `${JSON.stringify({ format: 1, users }, null, 2)}\n`, 0o600);
  await writeFileAtomic(brokerPaths(brokerDir).authFile, rendered, 0o600);
}

/**
 * The user list last written by writeBrokerUserList: empty when there is none (a broker
 * directory made by hand), and empty with the reason in `problem` when it cannot be read. Either
 * way the controller rebuilds the controller, operator and node users from mesh.json and the
 * store; only open tokens' users are lost with an unreadable list, and those tokens are issued
 * again.
 */
export async function readBrokerUserList(brokerDir: string): Promise<{ users: BrokerUser[]; problem?: string }> {
  const file = brokerUserListFile(brokerDir);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { users: [] };
    return { users: [], problem: `${file} could not be read (${(error as Error).message})` };
  }
  let parsed: { users?: unknown };
  try {
    parsed = JSON.parse(text) as { users?: unknown };
  } catch {
    return { users: [], problem: `${file} is not JSON` };
  }
  if (!Array.isArray(parsed?.users)) return { users: [], problem: `${file} holds no user list` };
  const users = parsed.users.filter((user): user is BrokerUser => {
    const role = (user as { role?: unknown } | null)?.role;
    return role === 'controller' || role === 'operator' || role === 'sync' || role === 'node' || role === 'enrolment';
  });
  return { users };
}
