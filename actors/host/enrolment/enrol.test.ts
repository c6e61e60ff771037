import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EnrolRefusal } from '../../../schema/enrolment';
import type { HostState } from '../../../schema/host-state';
import { decodeBase64, decodeToken, nkeySeedOf, publicKeyOf, sodium } from '../../shared/crypto';
import { ProcessRunner } from '../../shared/process/command-runner';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { createAdopter } from '../adoption/adoption.actor';
import { EnrolCommand } from '../cli/enrol.command';
import { DEFAULT_SETTINGS, openHost } from '../host-context';
import { FakeController } from '../link/testing/fake-controller';
import { runVerb } from '../profile/testing/cli-harness';
import { HostStore } from '../store/host-store';
import { enrol } from './enrol';
import {
  ControllerUnavailable,
  EnrolmentUnanswered,
  EnrolReplyMalformed,
  TokenExpired,
  TokenNotAccepted,
  TokenSecretWrong,
  TokenUnknown,
  TokenUsed,
} from './enrol-errors';

// Enrolment against a real nats-server with TLS; the controller's side is played by a fake
// that answers as told and checks the request's proof on its own.

let broker: TestBroker;
let controller: FakeController;
let root: string;

const stateDirOf = (machine: string): string => path.join(machine, 'var/lib/mesh-host');

beforeAll(async () => {
  broker = await startTestBroker({ dirPrefix: 'enrol test-broker' });
  controller = await FakeController.start(broker);
});
afterAll(async () => {
  await controller?.stop();
  await broker?.stop();
});

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'enrol-machine-'));
  await fs.mkdir(path.join(root, 'etc'), { recursive: true });
  await fs.writeFile(path.join(root, 'etc/os-release'), 'ID=alpine\nVERSION_ID=3.20.0\nPRETTY_NAME="Alpine Linux v3.20"\n');
  await fs.writeFile(path.join(root, 'etc/hostname'), 'workbench\n');
  await fs.mkdir(path.join(root, 'lib/apk/db'), { recursive: true });
  await fs.writeFile(path.join(root, 'lib/apk/db/installed'), 'P:musl\nV:1.2.5-r0\n\nP:busybox\nV:1.36.1-r29\n\n');
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

function enrolVerb(...args: string[]) {
  return runVerb([EnrolCommand], ['enrol', ...args, '--root', root]);
}

async function stored(): Promise<HostState> {
  return (await new HostStore(stateDirOf(root)).load()).state;
}

const exists = (file: string) => fs.stat(file).then(() => true, () => false);

async function openTestHost() {
  return openHost({ ...DEFAULT_SETTINGS, root, stateDir: stateDirOf(root) }, { runner: new ProcessRunner(), appliers: {}, adopter: createAdopter() });
}

describe('nox-mesh-host enrol', () => {
  test('enrols with a token: the store holds the identity and the pins, the WireGuard key is 0600, and the request carried the profile and inventory', async () => {
    const token = await controller.issueToken();
    controller.answerEnrolment(token.token_id, ({ request, proofHolds }) =>
      proofHolds && request.secret === token.secret
        ? { ok: true, node: 'workbench' }
        : { ok: false, refusal: 'proof_invalid', message: 'the proof does not hold', next: 'enrol again' });

    const outcome = await enrolVerb('--token', token.text);

    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toBe('enrolled as workbench; start the host (`nox-mesh-host run`, or the service) to receive its declarations\n');
    const received = controller.enrolments.find((e) => e.request.token_id === token.token_id);
    expect(received?.proofHolds).toBe(true);
    const request = received!.request;
    expect(request.profile.os.id).toBe('alpine');
    expect(request.profile.package_manager).toBe('apk');
    // The key's path as wg-quick will read it: the state directory under the root, not /var/lib.
    expect(request.profile.wireguard_key_path).toBe(path.join(stateDirOf(root), 'wireguard.key'));
    expect(request.hostname).toBe('workbench');
    expect(request.inventory.packages).toEqual(expect.arrayContaining([{ name: 'musl', version: '1.2.5-r0' }, { name: 'busybox', version: '1.36.1-r29' }]));

    const state = await stored();
    expect(state.identity?.node).toBe('workbench');
    expect(state.identity?.nkey_public).toBe(request.nkey_public);
    expect(state.identity?.public_key).toBe(request.public_key);
    expect(publicKeyOf(state.identity!.secret_key)).toBe(request.public_key);
    const decoded = decodeToken(token.text);
    expect(state.pins).toEqual({ broker_url: decoded.broker_url, broker_fingerprint: decoded.broker_fingerprint, controller_public_key: decoded.controller_public_key });

    const keyFile = path.join(stateDirOf(root), 'wireguard.key');
    expect((await fs.stat(keyFile)).mode & 0o777).toBe(0o600);
    const privateKey = decodeBase64((await fs.readFile(keyFile, 'utf8')).trim())!;
    expect(Buffer.from(sodium().crypto_scalarmult_base(privateKey)).toString('base64')).toBe(request.wireguard_public_key);

    // The identity stored is one the broker lets in as that node, once the controller added it.
    // (It adds the user after answering: nats-server forgets a reply permission on reload.)
    await controller.admitNode('workbench', request.nkey_public);
    const asNode = await broker.connectAsNode('workbench', nkeySeedOf(state.identity!.secret_key));
    await asNode.flush();
    await asNode.close();
  });

  test('enrolling again replaces the identity and keeps what the host owns', async () => {
    const first = await controller.issueToken();
    controller.answerEnrolment(first.token_id, () => ({ ok: true, node: 'oldname' }));
    expect((await enrolVerb('--token', first.text)).code).toBe(0);
    const owned = { resources: [{ key: 'file:/etc/motd', shape: 'file' as const, digest: 'a'.repeat(64), recorded_at: '2026-08-27T14:02:00Z' }] };
    await new HostStore(stateDirOf(root)).save({ ...(await stored()), owned });
    const before = await stored();

    const second = await controller.issueToken();
    controller.answerEnrolment(second.token_id, () => ({ ok: true, node: 'newname' }));
    const outcome = await enrolVerb('--token', second.text, '--json');

    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject({ node: 'newname', replaced_node: 'oldname' });
    const after = await stored();
    expect(after.identity?.node).toBe('newname');
    expect(after.identity?.public_key).not.toBe(before.identity?.public_key);
    expect(after.owned).toEqual(owned);
  });

  test('asking again after an answer that never came presents the same keys, so the controller can finish that enrolment', async () => {
    const token = await controller.issueToken();
    let answer = false;
    controller.answerEnrolment(token.token_id, () => (answer ? { ok: true, node: 'patient' } : new Promise<never>(() => undefined)));
    const first = await enrolVerb('--token', token.text, '--timeout', '1s');
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('no controller answered the enrolment request (no answer within 1 s)');
    expect((await fs.stat(path.join(stateDirOf(root), 'enrolment-keys.json'))).mode & 0o777).toBe(0o600);

    answer = true;
    const second = await enrolVerb('--token', token.text);
    expect(second.code).toBe(0);
    const [a, b] = controller.enrolments.filter((e) => e.request.token_id === token.token_id).map((e) => e.request);
    expect(b?.public_key).toBe(a?.public_key);
    expect(b?.nkey_public).toBe(a?.nkey_public);
    expect(b?.wireguard_public_key).toBe(a?.wireguard_public_key);
    expect((await stored()).identity?.public_key).toBe(a?.public_key);
    expect(await exists(path.join(stateDirOf(root), 'enrolment-keys.json'))).toBe(false);
  });

  const refusals: Array<[EnrolRefusal, new (...args: never[]) => Error]> = [
    ['token_used', TokenUsed],
    ['token_expired', TokenExpired],
    ['token_unknown', TokenUnknown],
    ['token_secret_wrong', TokenSecretWrong],
    ['unavailable', ControllerUnavailable],
  ];
  test.each(refusals)('a %s refusal becomes its own error with the controller\'s words and next step, and nothing is stored', async (refusal, condition) => {
    const token = await controller.issueToken();
    controller.answerEnrolment(token.token_id, () => ({ ok: false, refusal, message: `refused as ${refusal}`, next: `do the thing for ${refusal}` }));
    const host = await openTestHost();
    let error: unknown;
    try {
      error = await enrol(host, decodeToken(token.text), { timeoutMs: 5000 }).catch((e: unknown) => e);
    } finally {
      await host.close();
    }
    expect(error).toBeInstanceOf(condition);
    expect((error as Error).message).toContain(`refused as ${refusal}`);
    expect((error as Error).message).toContain(token.token_id);
    expect((error as Error).message).not.toContain(token.secret);
    expect((error as { next: string }).next).toBe(`do the thing for ${refusal}`);
    expect((await stored()).identity).toBeNull();
    await expect(fs.stat(path.join(stateDirOf(root), 'wireguard.key'))).rejects.toMatchObject({ code: 'ENOENT' });
    // Only an attempt that may still finish keeps its keys for the next try.
    expect(await exists(path.join(stateDirOf(root), 'enrolment-keys.json'))).toBe(refusal === 'unavailable');
  });

  test('a token whose one-time broker user is gone is reported as used or expired', async () => {
    const token = await controller.issueToken({ withBrokerUser: false });
    const outcome = await enrolVerb('--token', token.text);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('the broker did not accept this token: it has been used or has expired');
    expect(outcome.stderr).toContain('next:  issue a new token');
    expect(outcome.stderr).not.toContain(token.secret);

    const host = await openTestHost();
    await expect(enrol(host, decodeToken(token.text), { timeoutMs: 5000 }).finally(() => host.close())).rejects.toBeInstanceOf(TokenNotAccepted);
    expect((await stored()).identity).toBeNull();
  });

  test('with no controller listening, says nobody answered and stores nothing', async () => {
    const token = await controller.issueToken();
    const host = await openTestHost();
    const error = await enrol(host, decodeToken(token.text), { timeoutMs: 5000 }).catch((e: unknown) => e).finally(() => host.close());
    expect(error).toBeInstanceOf(EnrolmentUnanswered);
    // The request crosses from the enrolment account, where nats-server 2.9 sends no "no
    // responders" status: nobody listening is told as no answer in time.
    expect((error as Error).message).toContain('no controller answered the enrolment request (no answer within 5 s)');
    expect((await stored()).identity).toBeNull();
  });

  test('a controller that does not answer in time is reported as unanswered, naming the wait', async () => {
    const token = await controller.issueToken();
    controller.answerEnrolment(token.token_id, () => new Promise(() => undefined));
    const host = await openTestHost();
    const error = await enrol(host, decodeToken(token.text), { timeoutMs: 1000 }).catch((e: unknown) => e).finally(() => host.close());
    expect(error).toBeInstanceOf(EnrolmentUnanswered);
    expect((error as Error).message).toContain('no answer within 1 s');
    expect((await stored()).identity).toBeNull();
  });

  test('an answer that is not an enrolment reply is refused, and nothing is stored', async () => {
    const token = await controller.issueToken();
    controller.answerEnrolment(token.token_id, () => ({ ok: true, node: 'Not A Node Name' }));
    const host = await openTestHost();
    const error = await enrol(host, decodeToken(token.text), { timeoutMs: 5000 }).catch((e: unknown) => e).finally(() => host.close());
    expect(error).toBeInstanceOf(EnrolReplyMalformed);
    expect((error as Error).message).toContain('node:');
    expect((await stored()).identity).toBeNull();
  });

  test('a mistyped token is reported as mistyped, and nothing on the machine is touched', async () => {
    const token = await controller.issueToken();
    const at = 12; // a character, not a group dash: groups are six characters and a dash
    expect(token.text[at]).toMatch(/[0-9A-Z]/);
    const mistyped = `${token.text.slice(0, at)}${token.text[at] === '7' ? '8' : '7'}${token.text.slice(at + 1)}`;
    const outcome = await enrolVerb('--token', mistyped);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^error: the token does not check out: a character was mistyped/);
    await expect(fs.stat(stateDirOf(root))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(controller.enrolments.some((e) => e.request.token_id === token.token_id)).toBe(false);
  });
});
