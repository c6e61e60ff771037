import type { Declaration } from '../../../schema/declaration';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import { SHAPES_FOR_HOST_KIND } from '../../../schema/resource';
import { ForeignSigner, generateNodeIdentity, generateSigningKeyPair, ready, sealEnvelope, SignatureInvalid, type SigningKeyPair } from '../../shared/crypto';
import { admitDeclaration, type Admitted } from '../link/admit-declaration';
import { recordDeclaration } from '../link/record-declaration';
import { storedDeclaration } from './desired-resources';

let controller: SigningKeyPair;
let enrolled: HostState;

const rules = { hostUnit: 'nox-mesh-host', root: '/', stateDir: '/var/lib/mesh-host', shapes: SHAPES_FOR_HOST_KIND.resident };

const declaration: Declaration = {
  node: 'alpha',
  epoch: 1,
  generation: 1,
  kind: 'full',
  issued_at: '2026-08-27T14:02:00Z',
  resources: [{ shape: 'file', path: '/etc/motd', content: { text: 'hello\n' }, mode: '0644', owner: 'root', group: 'root' }],
};

beforeAll(async () => {
  await ready();
  controller = generateSigningKeyPair();
  enrolled = {
    ...emptyHostState(),
    identity: { node: 'alpha', ...generateNodeIdentity() },
    pins: { broker_url: 'tls://broker.example:4222', broker_fingerprint: 'f'.repeat(64), controller_public_key: controller.public_key },
  };
});

function admitted(): Admitted {
  const admission = admitDeclaration(sealEnvelope(declaration, controller.secret_key), enrolled, rules);
  if (!admission.ok) throw new Error(`not admitted: ${admission.detail}`);
  return admission;
}

/** The state as the next start reads it from its file: the same content, new objects. */
const fromFile = (state: HostState): HostState => JSON.parse(JSON.stringify(state)) as HostState;

describe('the declaration the pass applies', () => {
  test('is the one the gate verified, not verified a second time', () => {
    const admission = admitted();
    expect(storedDeclaration(recordDeclaration(enrolled, admission))).toBe(admission.declaration);
  });

  test('is verified again when it comes from the file, and a signature altered there is refused', () => {
    const state = fromFile(recordDeclaration(enrolled, admitted()));
    expect(storedDeclaration(state)).toEqual(declaration);
    const envelope = state.last_declaration?.envelope as { signature: string };
    const altered = Buffer.from(envelope.signature, 'base64');
    altered[0] = (altered[0] as number) ^ 0x01;
    const tampered = fromFile(state);
    (tampered.last_declaration?.envelope as { signature: string }).signature = altered.toString('base64');
    expect(() => storedDeclaration(tampered)).toThrow(SignatureInvalid);
  });

  test('is verified again against a controller key pinned since', () => {
    const state = recordDeclaration(enrolled, admitted());
    const repinned: HostState = { ...state, pins: { ...(state.pins as NonNullable<HostState['pins']>), controller_public_key: generateSigningKeyPair().public_key } };
    expect(() => storedDeclaration(repinned)).toThrow(ForeignSigner);
  });
});
