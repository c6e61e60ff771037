import { emptyHostState, type HostState } from '../../../schema/host-state';
import { releasedState } from './released-state';

describe('the store after release', () => {
  test('holds no identity, pins, declaration or fences, and keeps what is still owned and the known-good version', () => {
    const owned = { resources: [{ key: 'file:/etc/stuck', shape: 'file' as const, digest: 'a'.repeat(64), recorded_at: '2026-08-27T14:02:00Z' }] };
    const enrolled: HostState = {
      ...emptyHostState(),
      identity: { node: 'alpha', nkey_public: `U${'A'.repeat(55)}`, public_key: `${'A'.repeat(43)}=`, secret_key: `${'B'.repeat(43)}=` },
      pins: { broker_url: 'tls://broker.example:4222', broker_fingerprint: 'f'.repeat(64), controller_public_key: `${'C'.repeat(43)}=` },
      last_declaration: { envelope: {}, applied_generation: 4, digest: 'd'.repeat(64) },
      highest_epoch: 6,
      sequence: 4,
      report_sequence: 12,
      owned,
      known_good_version: '0.1.0',
      last_linked_at: '2026-08-27T14:10:31Z',
    };
    expect(releasedState(enrolled)).toEqual({
      ...emptyHostState(),
      sequence: 4,
      report_sequence: 12,
      owned,
      known_good_version: '0.1.0',
    });
  });
});
