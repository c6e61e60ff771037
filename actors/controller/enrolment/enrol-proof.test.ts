import { randomBytes } from 'node:crypto';
import type { EnrolRequest } from '../../../schema/enrolment';
import { signEnrolRequest } from '../../host/enrolment/sign-enrol-request';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { enrolProofHolds } from './enrol-proof';

function unsigned(identity: ReturnType<typeof generateNodeIdentity>): Omit<EnrolRequest, 'proof'> {
  return {
    format: 'mesh-enrol-1',
    token_id: '0123456789abcdef',
    secret: 'A'.repeat(43),
    public_key: identity.public_key,
    nkey_public: identity.nkey_public,
    wireguard_public_key: randomBytes(32).toString('base64'),
    hostname: 'alpha',
    profile: {
      os: { id: 'alpine' }, arch: 'aarch64', kernel: '6.6.0', init: 'openrc', package_manager: 'apk',
      container_runtime: 'none', graphical_session: false, host_kind: 'resident', hostname: 'alpha',
    },
    inventory: { packages: [{ name: 'busybox', version: '1.36' }], services: [], containers: [], collected_at: '2026-12-01T10:00:00.000Z' },
    version_running: '0.1.0',
  };
}

describe('the enrolment proof', () => {
  beforeAll(() => ready());

  test('holds for a request signed the way the host signs it', () => {
    const identity = generateNodeIdentity();
    expect(enrolProofHolds(signEnrolRequest(unsigned(identity), identity.secret_key))).toBe(true);
  });

  test('does not hold when any signed field was changed on the way', () => {
    const identity = generateNodeIdentity();
    const request = signEnrolRequest(unsigned(identity), identity.secret_key);
    expect(enrolProofHolds({ ...request, wireguard_public_key: randomBytes(32).toString('base64') })).toBe(false);
    expect(enrolProofHolds({ ...request, profile: { ...request.profile, init: 'systemd' } })).toBe(false);
  });

  test('does not hold for a proof made by another key than the one presented', () => {
    const identity = generateNodeIdentity();
    const thief = generateNodeIdentity();
    const request = signEnrolRequest(unsigned(identity), thief.secret_key);
    expect(enrolProofHolds(request)).toBe(false);
  });
});
