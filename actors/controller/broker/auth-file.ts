import { fromPublic } from '@nats-io/nkeys';
import { NodeName } from '../../../schema/primitives';
import { writeFileAtomic } from '../../host/store/atomic-write';
import { AuthFileWithoutController, BrokerUserDuplicate, BrokerUserInvalid } from './broker-errors';
import { natsString } from './nats-conf-string';
import { controllerPermissions, enrolmentPermissions, nodePermissions, operatorPermissions, type SubjectPermissions } from './permissions';
import { enrolmentUserName } from '../../shared/bus/subjects';

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
export type BrokerUser = ControllerUser | OperatorUser | NodeUser | EnrolmentUser;

/**
 * The broker's user list as the `authorization` block nats-server includes. Every user gets an
 * explicit permissions block: a user without one may do anything. Entries are checked (nkeys by
 * their checksum) and sorted (controllers and operators by key, nodes by name, tokens by id), so
 * the same list always renders the same bytes.
 *
 * A list without a controller is refused (AuthFileWithoutController): with no users at all,
 * nats-server would let every connection in without credentials.
 */
export function renderAuthFile(users: readonly BrokerUser[]): string {
  checkUsers(users);
  const controllers = users.filter((user): user is ControllerUser => user.role === 'controller').sort((a, b) => compare(a.nkey, b.nkey));
  const operators = users.filter((user): user is OperatorUser => user.role === 'operator').sort((a, b) => compare(a.nkey, b.nkey));
  const nodes = users.filter((user): user is NodeUser => user.role === 'node').sort((a, b) => compare(a.node, b.node));
  const tokens = users.filter((user): user is EnrolmentUser => user.role === 'enrolment').sort((a, b) => compare(a.token_id, b.token_id));
  const entries = [
    ...controllers.map((user) => entry('controller', [`nkey: ${natsString(user.nkey)}`], controllerPermissions())),
    ...operators.map((user) => entry('operator', [`nkey: ${natsString(user.nkey)}`], operatorPermissions())),
    ...nodes.map((user) => entry(`node ${user.node}`, [`nkey: ${natsString(user.nkey)}`], nodePermissions(user.node))),
    ...tokens.map((user) => entry(`enrolment token ${user.token_id}`, [
      `user: ${natsString(enrolmentUserName(user.token_id))}`,
      `password: ${natsString(user.password)}`,
    ], enrolmentPermissions(user.token_id))),
  ];
  return [
    '# The broker\'s users. mesh-control writes this file whole; edits here are lost.',
    'authorization {',
    '  users: [',
    ...entries,
    '  ]',
    '}',
    '',
  ].join('\n');
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
    `    # ${comment}`,
    '    {',
    ...credentials.map((line) => `      ${line}`),
    '      permissions: {',
    `        publish: { allow: ${list(permissions.publish)} }`,
    `        subscribe: { allow: ${list(permissions.subscribe)} }`,
    ...(permissions.allow_responses ? ['        allow_responses: true'] : []),
    '      }',
    '    }',
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
