import type { ControllerLog } from '../logs/log-fields';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { brokerUserListFile } from '../serve/broker-user-list';
import { renderAuthFile } from './auth-file';
import { BROKER_USERS_BUCKET, BROKER_USERS_KEY } from './broker-users-bucket-name';
import { decodeBrokerUsers } from './broker-users-bucket';

/** The list in the bucket was not applied: it would lock the sync out, or it does not render. */
export class BrokerUsersRefused extends Error {
  constructor(message: string, readonly revision: number) {
    super(message);
  }
}

/** Where and how one server's user list is applied. */
export interface BrokerSyncTarget {
  /** The mesh's broker directory (its users.json is kept beside the list, for a controller that takes over here). */
  brokerDir: string;
  /** The auth.conf this server reads (a link to the mesh's own on the controller's machine; written at its real path). */
  authFile: string;
  /** The sync's own user: a list without it is refused, as applying it would shut the sync out for good. */
  syncNkey: string;
  /** Makes this server read its files again; BrokerNotRunning-style errors are the caller's to judge. */
  reload: () => Promise<void>;
}

/** What one look at the bucket did. */
export type SyncStep =
  | { kind: 'empty' }
  | { kind: 'unchanged'; revision: number }
  | { kind: 'applied'; revision: number; nodes: number; tokens: number };

/** Binds the bucket for reading only: no look at the stream, which the sync may not ask for. */
export function bindBrokerUsersBucket(nc: NatsConnection, timeoutMs = 5000): Promise<KV> {
  return new Kvm(jetstream(nc, { timeout: timeoutMs, checkAPI: false })).open(BROKER_USERS_BUCKET);
}

/**
 * Reads the list from the bucket and, when its revision is not `lastRevision`, renders it
 * (every entry checked again by renderAuthFile), writes it to this server's auth.conf and to
 * users.json if either differs, and reloads the server. Only a new revision is applied: on the
 * acting controller's machine the controller writes its file before the bucket hears of it, and
 * an older revision must not be written over it.
 */
export async function applyBrokerUsers(kv: KV, target: BrokerSyncTarget, lastRevision: number | undefined, options: { reloadOwed?: boolean } = {}): Promise<SyncStep> {
  const entry = await kv.get(BROKER_USERS_KEY);
  if (entry === null || entry.operation !== 'PUT') return { kind: 'empty' };
  if (entry.revision === lastRevision) return { kind: 'unchanged', revision: entry.revision };
  const users = decodeBrokerUsers(entry.value);
  if (!users.some((user) => user.role === 'sync' && user.nkey === target.syncNkey)) {
    throw new BrokerUsersRefused(`the user list at revision ${entry.revision} does not hold this sync's user (${target.syncNkey}); applying it would shut the sync out`, entry.revision);
  }
  let rendered: string;
  try {
    rendered = renderAuthFile(users);
  } catch (error) {
    throw new BrokerUsersRefused(`the user list at revision ${entry.revision} is refused: ${(error as Error).message}`, entry.revision);
  }
  const authFile = await fs.realpath(target.authFile).catch(() => path.resolve(target.authFile));
  const onDisk = await fs.readFile(authFile, 'utf8').catch(() => undefined);
  const listFile = brokerUserListFile(target.brokerDir);
  const list = `${JSON.stringify({ format: 1, users }, null, 2)}\n`;
  if ((await fs.readFile(listFile, 'utf8').catch(() => undefined)) !== list) await writeFileAtomic(listFile, list, 0o600);
  if (onDisk !== rendered) await writeFileAtomic(authFile, rendered, 0o600);
  // A reload that failed after the write is owed even though the file now matches.
  if (onDisk !== rendered || options.reloadOwed === true) await target.reload();
  return {
    kind: 'applied',
    revision: entry.revision,
    nodes: users.filter((user) => user.role === 'node').length,
    tokens: users.filter((user) => user.role === 'enrolment').length,
  };
}

/**
 * Looks at the bucket every `intervalMs` until `signal` aborts, applying each new revision
 * (applyBrokerUsers). A look that fails (the cluster electing a leader, this server down) is
 * said once and tried again; a refused list is said once and left unapplied until a newer one.
 */
export async function runBrokerSync(kv: KV, target: BrokerSyncTarget, options: { intervalMs: number; signal: AbortSignal; log: ControllerLog }): Promise<void> {
  let lastRevision: number | undefined;
  let lastTrouble = '';
  let reloadOwed = false;
  while (!options.signal.aborted) {
    try {
      // Until a look succeeds, assume the last one may have written without reloading.
      const step = await applyBrokerUsers(kv, target, lastRevision, { reloadOwed });
      reloadOwed = false;
      if (step.kind === 'applied') options.log(`broker sync: applied the user list at revision ${step.revision} (${step.nodes} node(s), ${step.tokens} open token(s))`, { level: 'info', revision: step.revision });
      if (step.kind !== 'empty') lastRevision = step.revision;
      if (lastTrouble !== '') options.log('broker sync: the bucket answers again', { level: 'info' });
      lastTrouble = '';
    } catch (error) {
      const trouble = (error as Error).message;
      if (trouble !== lastTrouble) options.log(`broker sync: ${trouble}; trying again every ${options.intervalMs} ms`, { level: 'warn' });
      lastTrouble = trouble;
      // A refused revision is not asked for again until a newer one comes.
      if (error instanceof BrokerUsersRefused) lastRevision = error.revision;
      else reloadOwed = true;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.intervalMs);
      options.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }
}
