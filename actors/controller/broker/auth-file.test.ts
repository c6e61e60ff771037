import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAccount, createUser } from '@nats-io/nkeys';
import { brokerPasswordFor, generateTokenCredentials } from '../../shared/crypto';
import { renderAuthFile, writeAuthFile, type ControllerUser, type EnrolmentUser, type NodeUser } from './auth-file';
import { AuthFileWithoutController, BrokerUserDuplicate, BrokerUserInvalid } from './broker-errors';

const controller: ControllerUser = { role: 'controller', nkey: createUser().getPublicKey() };
const alpha: NodeUser = { role: 'node', node: 'alpha', nkey: createUser().getPublicKey() };
const beta: NodeUser = { role: 'node', node: 'beta', nkey: createUser().getPublicKey() };
const token = generateTokenCredentials();
const enrolment: EnrolmentUser = { role: 'enrolment', token_id: token.token_id, password: brokerPasswordFor(token.secret, token.token_id) };

describe('renderAuthFile', () => {
  test('renders the same bytes for the same users in any order', () => {
    const rendered = renderAuthFile([controller, alpha, beta, enrolment]);
    expect(renderAuthFile([enrolment, beta, controller, alpha])).toBe(rendered);
    expect(rendered.indexOf('# node alpha')).toBeLessThan(rendered.indexOf('# node beta'));
  });

  test('gives every user its own permissions block, so none is left with the default of everything', () => {
    const rendered = renderAuthFile([controller, alpha, beta, enrolment]);
    expect(rendered.match(/permissions: \{/g)).toHaveLength(4);
    // Answers to other accounts go to the `_R_.` replies the server maps, not through allow_responses.
    expect(rendered).not.toContain('allow_responses');
  });

  test('puts controllers and the operator beside JetStream, and nodes and enrolment users each in their own account', () => {
    const operator = { role: 'operator', nkey: createUser().getPublicKey() } as const;
    const rendered = renderAuthFile([controller, alpha, enrolment, operator]);
    const accountOf = (marker: string): string => {
      const before = rendered.slice(0, rendered.indexOf(marker));
      return [...before.matchAll(/\n {2}([A-Z]+) \{/g)].at(-1)?.[1] ?? 'none';
    };
    expect(accountOf('# controller\n')).toBe('MESH');
    expect(accountOf('# node alpha')).toBe('NODES');
    expect(accountOf(`# enrolment token ${token.token_id}`)).toBe('ENROL');
    expect(accountOf('# operator\n')).toBe('MESH');
    expect(rendered).not.toContain('OPERATOR');
    expect(rendered).toContain('publish: { allow: ["mesh.control.>"] }');
    expect(rendered.match(/jetstream: enabled/g)).toHaveLength(1);
    expect(accountOf('jetstream: enabled')).toBe('MESH');
  });

  test('writes a node\'s permissions in its own names only', () => {
    const rendered = renderAuthFile([controller, alpha]);
    const alphaBlock = rendered.slice(rendered.indexOf('# node alpha'));
    expect(alphaBlock).toContain('publish: { allow: ["mesh.node.alpha.>", "mesh.js.CONSUMER.MSG.NEXT.MESH_DECLARATIONS.node-alpha", "mesh.js.CONSUMER.INFO.MESH_DECLARATIONS.node-alpha", "$JS.ACK.MESH_DECLARATIONS.node-alpha.>"] }');
    expect(alphaBlock).toContain('subscribe: { allow: ["_INBOX_node_alpha.>"] }');
  });

  test('names an enrolment user after its token and allows it one subject', () => {
    const rendered = renderAuthFile([controller, enrolment]);
    expect(rendered).toContain(`user: "enrol-${token.token_id}"`);
    expect(rendered).toContain(`publish: { allow: ["mesh.enrol.${token.token_id}"] }`);
    expect(rendered).toContain(`subscribe: { allow: ["_INBOX.enrol.${token.token_id}.>"] }`);
  });

  test('refuses a list without a controller, which with no users would let anyone in', () => {
    expect(() => renderAuthFile([])).toThrow(AuthFileWithoutController);
    expect(() => renderAuthFile([alpha, enrolment])).toThrow(AuthFileWithoutController);
  });

  test('refuses a key that is not a user nkey: mistyped, cut short, or an account key', () => {
    const good = alpha.nkey;
    const mistyped = `${good.slice(0, 10)}${good[10] === 'A' ? 'B' : 'A'}${good.slice(11)}`;
    for (const nkey of [mistyped, good.slice(0, -1), createAccount().getPublicKey(), '']) {
      expect(() => renderAuthFile([controller, { role: 'node', node: 'alpha', nkey }])).toThrow(BrokerUserInvalid);
    }
  });

  test('refuses a node name that is not one subject token', () => {
    for (const node of ['a.b', '>', '*', 'Alpha', 'has space', '']) {
      expect(() => renderAuthFile([controller, { role: 'node', node, nkey: createUser().getPublicKey() }])).toThrow(BrokerUserInvalid);
    }
  });

  test('refuses one key for two users, one name for two nodes, and one token twice', () => {
    const shared = createUser().getPublicKey();
    expect(() => renderAuthFile([controller, { role: 'node', node: 'a', nkey: shared }, { role: 'node', node: 'b', nkey: shared }])).toThrow(BrokerUserDuplicate);
    expect(() => renderAuthFile([controller, alpha, { ...alpha, nkey: createUser().getPublicKey() }])).toThrow(BrokerUserDuplicate);
    expect(() => renderAuthFile([controller, { role: 'controller', nkey: alpha.nkey }, alpha])).toThrow(BrokerUserDuplicate);
    expect(() => renderAuthFile([controller, enrolment, enrolment])).toThrow(BrokerUserDuplicate);
  });

  test('refuses a password nats-server would take for a bcrypt hash, without quoting it', () => {
    const password = '$2a$11$abcdefghijklmnopqrstuvwxyz0123456789';
    let refusal: unknown;
    try {
      renderAuthFile([controller, { role: 'enrolment', token_id: token.token_id, password }]);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(BrokerUserInvalid);
    expect(JSON.stringify((refusal as BrokerUserInvalid).toJSON())).not.toContain('abcdefghijklmnop');
  });

  test('refuses a token id that is not 16 lowercase hex digits', () => {
    for (const token_id of ['ABCDEF0123456789', '0123', 'mesh.>', '']) {
      expect(() => renderAuthFile([controller, { role: 'enrolment', token_id, password: 'a'.repeat(43) }])).toThrow(BrokerUserInvalid);
    }
  });
});

describe('writeAuthFile', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh auth-'));
  });

  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('writes the list readable by its owner alone, replacing the previous one whole', async () => {
    const file = path.join(dir, 'auth.conf');
    await fs.writeFile(file, 'old', { mode: 0o644 });
    await writeAuthFile(file, [controller, enrolment]);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(await fs.readFile(file, 'utf8')).toBe(renderAuthFile([controller, enrolment]));
    expect((await fs.readdir(dir)).filter((name) => name !== 'auth.conf')).toEqual([]);
  });

  test('leaves the previous list in place when the new one is refused', async () => {
    const file = path.join(dir, 'kept.conf');
    await writeAuthFile(file, [controller]);
    await expect(writeAuthFile(file, [alpha])).rejects.toThrow(AuthFileWithoutController);
    expect(await fs.readFile(file, 'utf8')).toBe(renderAuthFile([controller]));
  });
});
