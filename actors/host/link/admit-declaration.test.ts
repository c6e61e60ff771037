import { digestOf } from '../../../schema/canonical';
import type { Declaration } from '../../../schema/declaration';
import type { Envelope } from '../../../schema/envelope';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import { SHAPES_FOR_HOST_KIND } from '../../../schema/resource';
import { generateNodeIdentity, generateSigningKeyPair, ready, sealEnvelope, type SigningKeyPair } from '../../shared/crypto';
import { admitDeclaration, type AdmissionRules } from './admit-declaration';

let controller: SigningKeyPair;
let stranger: SigningKeyPair;
let state: HostState;

const rules: AdmissionRules = { hostUnit: 'nox-mesh-host', root: '/', stateDir: '/var/lib/mesh-host', shapes: SHAPES_FOR_HOST_KIND.resident };

function declaration(overrides: Partial<Declaration> = {}): Declaration {
  return {
    node: 'alpha',
    epoch: 5,
    generation: 3,
    kind: 'full',
    issued_at: '2026-08-27T14:02:00Z',
    resources: [{ shape: 'file', path: '/etc/motd', content: { text: 'hello\n' }, mode: '0644', owner: 'root', group: 'root' }],
    ...overrides,
  };
}

beforeAll(async () => {
  await ready();
  controller = generateSigningKeyPair();
  stranger = generateSigningKeyPair();
  const held = sealEnvelope(declaration({ generation: 2 }), controller.secret_key);
  state = {
    ...emptyHostState(),
    identity: { node: 'alpha', ...generateNodeIdentity() },
    pins: { broker_url: 'tls://broker.example:4222', broker_fingerprint: 'f'.repeat(64), controller_public_key: controller.public_key },
    last_declaration: { envelope: held, applied_generation: 2, digest: 'd'.repeat(64) },
    highest_epoch: 5,
  };
});

const seal = (d: Declaration, key = controller.secret_key): Envelope => sealEnvelope(d, key);

describe('the declaration gate', () => {
  test('admits a newer declaration for this node signed by the pinned controller, with the digest of its payload', () => {
    const admission = admitDeclaration(seal(declaration()), state, rules);
    expect(admission).toMatchObject({ ok: true, declaration: { generation: 3, kind: 'full' }, digest: digestOf(declaration()) });
  });

  test('admits a declaration from a newer controller epoch', () => {
    expect(admitDeclaration(seal(declaration({ epoch: 9 })), state, rules).ok).toBe(true);
  });

  test('admits the first declaration a freshly enrolled node receives, whatever its generation', () => {
    expect(admitDeclaration(seal(declaration({ generation: 1 })), { ...state, last_declaration: null }, rules).ok).toBe(true);
  });

  test('refuses a declaration altered after signing, without trusting anything it claims', () => {
    const envelope = seal(declaration());
    const altered = { ...envelope, payload: Buffer.from(Buffer.from(envelope.payload, 'base64').toString().replace('hello', 'owned!')).toString('base64') };
    const admission = admitDeclaration(altered, state, rules);
    expect(admission).toEqual({ ok: false, reason: 'bad_signature', detail: expect.stringMatching(/signature does not verify/) });
  });

  test('refuses a declaration signed by another controller', () => {
    expect(admitDeclaration(seal(declaration(), stranger.secret_key), state, rules)).toMatchObject({ ok: false, reason: 'foreign_key' });
  });

  test('refuses a declaration that names the pinned key as signer but was signed by another', () => {
    const forged = { ...seal(declaration(), stranger.secret_key), signer: controller.public_key };
    expect(admitDeclaration(forged, state, rules)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  test('refuses a declaration addressed to another node', () => {
    expect(admitDeclaration(seal(declaration({ node: 'beta' })), state, rules)).toMatchObject({
      ok: false, reason: 'wrong_node', generation: 3, epoch: 5, detail: expect.stringContaining('"beta"'),
    });
  });

  test('refuses a declaration from an older controller epoch, quoting both epochs', () => {
    const admission = admitDeclaration(seal(declaration({ epoch: 4, generation: 9 })), state, rules);
    expect(admission).toMatchObject({ ok: false, reason: 'stale_epoch', epoch: 4, generation: 9 });
    expect(!admission.ok && admission.detail).toMatch(/epoch 4.*epoch 5/);
  });

  test('refuses an older generation (a replay) and the generation already held (a redelivery)', () => {
    expect(admitDeclaration(seal(declaration({ generation: 1 })), state, rules)).toMatchObject({ ok: false, reason: 'older_generation', detail: expect.stringContaining('older than generation 2') });
    expect(admitDeclaration(seal(declaration({ generation: 2 })), state, rules)).toMatchObject({ ok: false, reason: 'older_generation', detail: expect.stringContaining('already holds') });
  });

  test('refuses what is not a signed envelope, and a signed payload that is not a declaration, as malformed', () => {
    expect(admitDeclaration(undefined, state, rules)).toMatchObject({ ok: false, reason: 'malformed' });
    expect(admitDeclaration({ format: 'mesh-envelope-1', payload: 'e30=', signature: '', signer: '' }, state, rules)).toMatchObject({ ok: false });
    const notDeclaration = sealEnvelope({ ...declaration(), kind: 'everything' }, controller.secret_key);
    expect(admitDeclaration(notDeclaration, state, rules)).toMatchObject({ ok: false, reason: 'malformed', detail: expect.stringContaining('declaration.kind') });
  });

  test('refuses a declaration naming the host\'s own unit, its unit file or its state directory', () => {
    const service = { shape: 'service', name: 'nox-mesh-host.service', state: 'stopped', enabled: false } as unknown as Declaration['resources'][number];
    expect(admitDeclaration(seal(declaration({ resources: [service] })), state, rules)).toMatchObject({ ok: false, reason: 'own_unit' });
    const unitFile = { shape: 'file', path: '/etc/systemd/system/nox-mesh-host.service', content: { text: '' }, mode: '0644', owner: 'root', group: 'root' } as const;
    expect(admitDeclaration(seal(declaration({ resources: [unitFile] })), state, rules)).toMatchObject({ ok: false, reason: 'own_unit' });
    const inStore = { ...unitFile, path: '/var/lib/mesh-host/state.json' };
    expect(admitDeclaration(seal(declaration({ resources: [inStore] })), state, rules)).toMatchObject({ ok: false, reason: 'own_unit' });
  });

  test('refuses a shape this kind of host does not take', () => {
    const episodic = { ...rules, shapes: SHAPES_FOR_HOST_KIND.episodic };
    const withPackage = declaration({ resources: [{ shape: 'package', name: 'htop' } as unknown as Declaration['resources'][number]] });
    expect(admitDeclaration(seal(withPackage), state, episodic)).toMatchObject({ ok: false, reason: 'shape_not_supported', detail: expect.stringContaining('package') });
    expect(admitDeclaration(seal(withPackage), state, rules).ok).toBe(true);
  });

  test('refuses everything while the host is not enrolled', () => {
    expect(admitDeclaration(seal(declaration()), { ...state, identity: null, pins: null }, rules)).toMatchObject({ ok: false, reason: 'wrong_node' });
  });

  test('admits broker pins that keep a certificate it pins now: the next one announced beside it', () => {
    const admission = admitDeclaration(seal(declaration({ broker_fingerprints: ['f'.repeat(64), 'a'.repeat(64)] })), state, rules);
    expect(admission).toMatchObject({ ok: true, declaration: { broker_fingerprints: ['f'.repeat(64), 'a'.repeat(64)] } });
  });

  test('refuses broker pins that keep none of the certificates it pins, since taking them would cut the node off', () => {
    const admission = admitDeclaration(seal(declaration({ broker_fingerprints: ['a'.repeat(64)] })), state, rules);
    expect(admission).toMatchObject({ ok: false, reason: 'malformed', generation: 3 });
    expect(!admission.ok && admission.detail).toMatch(/pins broker certificates sha256 a{64}, none of which this host pins now \(sha256 f{64}\): taking it would cut this node off/);
  });

  test('refuses broker pins that are not fingerprints, or three of them, as malformed', () => {
    for (const pins of [['F'.repeat(64)], ['f'.repeat(64), 'a'.repeat(64), 'b'.repeat(64)], ['f'.repeat(64), 'f'.repeat(64)], []]) {
      const admission = admitDeclaration(seal(declaration({ broker_fingerprints: pins })), state, rules);
      expect([pins.length, admission.ok && 'admitted', !admission.ok && admission.reason]).toEqual([pins.length, false, 'malformed']);
    }
  });

  test('refuses broker pins signed by another key: a pin arrives only signed by the mesh', () => {
    const admission = admitDeclaration(seal(declaration({ broker_fingerprints: ['f'.repeat(64), 'a'.repeat(64)] }), stranger.secret_key), state, rules);
    expect(admission).toMatchObject({ ok: false, reason: 'foreign_key' });
  });
});
