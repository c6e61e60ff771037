import { fromPublic } from '@nats-io/nkeys';
import { NodeName } from '../../../schema/primitives';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { AuthFileWithoutController, BrokerUserDuplicate, BrokerUserInvalid } from './broker-errors';
import { natsString } from './nats-conf-string';
import { BROKER_USERS_STREAM } from './broker-users-bucket-name';
import { controllerPermissions, enrolmentPermissions, nodePermissions, operatorPermissions, syncPermissions, type SubjectPermissions } from './permissions';
import { DECLARATION_STREAM, NODE_JS_API_PREFIX, enrolmentSubject, enrolmentUserName, nodeSubjectRoot } from '../../shared/bus/subjects';

/**
 * The broker's accounts. The operator's CLI is a MESH user with its own narrow permissions (it
 * publishes `mesh.control.>` only, and no JetStream request of it exists that could aim an
 * answer): asked in the controller's account, a call with no controller serving gets the
 * broker's "no responders" at once, where across an import nats-server 2.9 stays silent. Subjects and replies never cross an account except through the
 * exports and imports renderAuthFile writes, so what JetStream or a controller publishes in
 * answer to a request lands in the requester's account, never on a controller's or another
 * account's subject, whatever reply subject the requester chose.
 */
export const BROKER_ACCOUNTS = {
  /** Controllers, JetStream (the declaration stream, the lease bucket). */
  mesh: 'MESH',
  /** Every enrolled node. */
  nodes: 'NODES',
  /** Every token's one-time enrolment user. */
  enrol: 'ENROL',
} as const;

/** A controller process, by its nkey. Several may exist (one acts, under the lease). */
export interface ControllerUser {
  role: 'controller';
  nkey: string;
}

/** The operator's CLI on the controller's machine, by the nkey `mesh-control init` made for it. */
export interface OperatorUser {
  role: 'operator';
  nkey: string;
}

/**
 * `mesh-control broker sync` on a cluster's broker machines, by the nkey `mesh-control broker
 * cluster` made for it: it reads the user list from the bucket the acting controller writes and
 * applies it to its own server (docs/cluster.md).
 */
export interface SyncUser {
  role: 'sync';
  nkey: string;
}

/** An enrolled node, by its identity's nkey (`nkeyPublicOf` its public key). */
export interface NodeUser {
  role: 'node';
  node: string;
  nkey: string;
}

/**
 * The one-time user a token allows: name `enrol-<token id>`, password `brokerPasswordFor(secret,
 * token id)`, removed when the token is used or expires.
 *
 * The password is written as it is. nats-server 2.9 also accepts bcrypt hashes (`$2a$…`), but
 * neither Node nor this project's dependencies make bcrypt, and nats-server has no tool for it
 * (`nats server passwd` belongs to the separate nats CLI). What is stored is already a keyed
 * hash of the token's secret, not the secret: it lets a reader of this 0600 file connect as the
 * enrolment user until the token is used or expires, but not enrol, because the enrolment
 * request must also carry the secret, which the controller checks against its own hash.
 */
export interface EnrolmentUser {
  role: 'enrolment';
  token_id: string;
  password: string;
}

/** One entry of the broker's user list. */
export type BrokerUser = ControllerUser | OperatorUser | SyncUser | NodeUser | EnrolmentUser;

/**
 * The broker's accounts and users as the `accounts` block nats-server includes. Every user gets
 * an explicit permissions block (a user without one may do anything in its account). Entries
 * are checked (nkeys by their checksum) and sorted (controllers and operators by key, nodes by
 * name, tokens by id), so the same list always renders the same bytes.
 *
 * What crosses between accounts (docs/bus-trust.md draws it):
 * - NODES → MESH, services: a node's consumer requests (next, info; imported under
 *   NODE_JS_API_PREFIX) and acks. JetStream's answers come back mapped into NODES. A pull's
 *   mapping is kept 15 s (`response_threshold`), past the pull's own 10 s life, not the
 *   server's 2 min: a node renews its pull every 10 s, and 10,000 nodes would otherwise keep
 *   120,000 mappings alive (push→applied p99 at 1,000 nodes went from 3.0 s to 1.4 s).
 * - NODES → MESH, stream: `mesh.node.>` (reports, heartbeats); each node's permissions keep it
 *   to its own `mesh.node.<node>.>`. The stream carries no reply a controller answers.
 * - ENROL → MESH, service `mesh.enrol.*`, imported with `share`, so the controller's responder
 *   sees who asked (`Nats-Request-Info`).
 *
 * Only nats-server 2.9 was tried. A newer one may simplify this (docs/bus-trust.md): if it no
 * longer answers `$JS.API.>` itself in an account without JetStream, the prefix can go; its
 * operator mode (JWT accounts) would allow an account per node instead of the shared NODES.
 *
 * A list without a controller is refused (AuthFileWithoutController): with no users at all,
 * nats-server would let every connection in without credentials.
 */
export function renderAuthFile(users: readonly BrokerUser[]): string {
  checkUsers(users);
  const controllers = users.filter((user): user is ControllerUser => user.role === 'controller').sort((a, b) => compare(a.nkey, b.nkey));
  const operators = users.filter((user): user is OperatorUser => user.role === 'operator').sort((a, b) => compare(a.nkey, b.nkey));
  const syncs = users.filter((user): user is SyncUser => user.role === 'sync').sort((a, b) => compare(a.nkey, b.nkey));
  const nodes = users.filter((user): user is NodeUser => user.role === 'node').sort((a, b) => compare(a.node, b.node));
  const tokens = users.filter((user): user is EnrolmentUser => user.role === 'enrolment').sort((a, b) => compare(a.token_id, b.token_id));
  const { mesh, nodes: nodesAccount, enrol } = BROKER_ACCOUNTS;
  const consumers = `${DECLARATION_STREAM}.*`;
  const nodeRoot = `${nodeSubjectRoot('*').slice(0, -2)}.>`;
  const enrolments = enrolmentSubject('*');
  return [
    '# The broker\'s accounts and users. mesh-control writes this file whole; edits here are lost.',
    'accounts {',
    ...account(mesh, 'controllers, the operator\'s CLI and JetStream', ['jetstream: enabled'], [
      ...controllers.map((user) => entry('controller', [`nkey: ${natsString(user.nkey)}`], controllerPermissions())),
      ...operators.map((user) => entry('operator', [`nkey: ${natsString(user.nkey)}`], operatorPermissions())),
      ...syncs.map((user) => entry('broker sync', [`nkey: ${natsString(user.nkey)}`], syncPermissions(BROKER_USERS_STREAM))),
    ], [
      `{ service: ${natsString(`$JS.API.CONSUMER.MSG.NEXT.${consumers}`)}, response_type: "stream", response_threshold: "15s", accounts: [${natsString(nodesAccount)}] }`,
      `{ service: ${natsString(`$JS.API.CONSUMER.INFO.${consumers}`)}, accounts: [${natsString(nodesAccount)}] }`,
      `{ service: ${natsString(`$JS.ACK.${consumers}.>`)}, accounts: [${natsString(nodesAccount)}] }`,
      `{ service: ${natsString(enrolments)}, accounts: [${natsString(enrol)}] }`,
    ], [
      `{ stream: { account: ${natsString(nodesAccount)}, subject: ${natsString(nodeRoot)} } }`,
    ]),
    ...account(nodesAccount, 'enrolled nodes, without JetStream', [], nodes.map((user) => entry(`node ${user.node}`, [`nkey: ${natsString(user.nkey)}`], nodePermissions(user.node))), [
      `{ stream: ${natsString(nodeRoot)}, accounts: [${natsString(mesh)}] }`,
    ], [
      `{ service: { account: ${natsString(mesh)}, subject: ${natsString(`$JS.API.CONSUMER.MSG.NEXT.${consumers}`)} }, to: ${natsString(`${NODE_JS_API_PREFIX}.CONSUMER.MSG.NEXT.${consumers}`)} }`,
      `{ service: { account: ${natsString(mesh)}, subject: ${natsString(`$JS.API.CONSUMER.INFO.${consumers}`)} }, to: ${natsString(`${NODE_JS_API_PREFIX}.CONSUMER.INFO.${consumers}`)} }`,
      `{ service: { account: ${natsString(mesh)}, subject: ${natsString(`$JS.ACK.${consumers}.>`)} } }`,
    ]),
    ...account(enrol, 'one-time enrolment users', [], tokens.map((user) => entry(`enrolment token ${user.token_id}`, [
      `user: ${natsString(enrolmentUserName(user.token_id))}`,
      `password: ${natsString(user.password)}`,
    ], enrolmentPermissions(user.token_id))), [], [
      `{ service: { account: ${natsString(mesh)}, subject: ${natsString(enrolments)} }, share: true }`,
    ]),
    '}',
    '',
  ].join('\n');
}

function account(name: string, comment: string, settings: string[], users: string[], exports: string[], imports: string[]): string[] {
  const list = (key: string, items: string[]): string[] => (items.length === 0 ? [] : [`    ${key}: [`, ...items.map((item) => `      ${item}`), '    ]']);
  return [
    `  # ${comment}`,
    `  ${name} {`,
    ...settings.map((line) => `    ${line}`),
    // An account with no users is written with an empty list, which nats-server accepts.
    ...(users.length === 0 ? ['    users: []'] : ['    users: [', ...users, '    ]']),
    ...list('exports', exports),
    ...list('imports', imports),
    '  }',
  ];
}

/**
 * Writes the user list atomically (temp file, fsync, rename, fsync the directory) with mode
 * 0600: it holds enrolment passwords. The broker reads it at its next reload.
 */
export async function writeAuthFile(file: string, users: readonly BrokerUser[]): Promise<void> {
  await writeFileAtomic(file, renderAuthFile(users), 0o600);
}

function entry(comment: string, credentials: string[], permissions: SubjectPermissions): string {
  const list = (subjects: readonly string[]): string => `[${subjects.map(natsString).join(', ')}]`;
  return [
    `      # ${comment}`,
    '      {',
    ...credentials.map((line) => `        ${line}`),
    '        permissions: {',
    `          publish: { allow: ${list(permissions.publish)} }`,
    `          subscribe: { allow: ${list(permissions.subscribe)} }`,
    ...(permissions.allow_responses ? ['          allow_responses: true'] : []),
    '        }',
    '      }',
  ].join('\n');
}

function checkUsers(users: readonly BrokerUser[]): void {
  const seen = new Set<string>();
  const once = (key: string, shown: string): void => {
    if (seen.has(key)) throw new BrokerUserDuplicate(shown);
    seen.add(key);
  };
  for (const user of users) {
    switch (user.role) {
      case 'controller':
      case 'operator':
      case 'sync':
        checkNkey(user.nkey);
        once(`nkey ${user.nkey}`, user.nkey);
        break;
      case 'node':
        if (!NodeName.safeParse(user.node).success) throw new BrokerUserInvalid('a node user\'s name is not a node name', String(user.node));
        checkNkey(user.nkey);
        once(`nkey ${user.nkey}`, user.nkey);
        once(`node ${user.node}`, `node ${user.node}`);
        break;
      case 'enrolment':
        if (typeof user.token_id !== 'string' || !/^[0-9a-f]{16}$/.test(user.token_id)) {
          throw new BrokerUserInvalid('an enrolment user\'s token id is not 16 lowercase hex digits', String(user.token_id));
        }
        // base64url of at least 128 bits. It also keeps '$' out: nats-server takes a password
        // starting "$2" for a bcrypt hash.
        if (typeof user.password !== 'string' || !/^[A-Za-z0-9_-]{22,}$/.test(user.password)) {
          throw new BrokerUserInvalid(`the enrolment password for token ${user.token_id} is not base64url of at least 128 bits`, undefined);
        }
        once(`token ${user.token_id}`, `token ${user.token_id}`);
        break;
      default:
        throw new BrokerUserInvalid('a broker user has an unknown role', String((user as { role?: unknown }).role));
    }
  }
  if (!users.some((user) => user.role === 'controller')) throw new AuthFileWithoutController();
}

function checkNkey(nkey: string): void {
  let valid = false;
  try {
    valid = typeof nkey === 'string' && nkey.startsWith('U') && fromPublic(nkey).getPublicKey() === nkey;
  } catch {
    valid = false;
  }
  if (!valid) throw new BrokerUserInvalid('a broker user\'s key is not a NATS user nkey (U…, with a valid checksum)', String(nkey));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
