import { emptyHostState, type HostIdentity, type HostPins, type HostState } from '../../../schema/host-state';
import { enrolledState } from './enrolled-state';

const key = (c: string) => `${c.repeat(43)}=`;
const identity = (node: string, c: string): HostIdentity => ({ node, nkey_public: `U${c.repeat(55)}`, public_key: key(c), secret_key: key(c) });
const pins = (controller: string): HostPins => ({ broker_url: 'tls://broker.example:4222', broker_fingerprint: 'f'.repeat(64), controller_public_key: key(controller) });

const AT = '2026-08-28T09:00:00.000Z';
const owned = { resources: [{ key: 'file:/etc/motd', shape: 'file' as const, digest: 'a'.repeat(64), recorded_at: '2026-08-27T14:02:00Z' }] };
const enrolled: HostState = {
  ...emptyHostState(),
  identity: identity('workstation', 'A'),
  pins: pins('C'),
  last_declaration: { envelope: { any: 'thing' }, applied_generation: 7, digest: 'd'.repeat(64) },
  highest_epoch: 12,
  sequence: 7,
  report_sequence: 40,
  owned,
  local_resources: [{ shape: 'directory', path: '/srv/x', mode: '0755', owner: 'root', group: 'root' }],
  known_good_version: '0.1.0',
  last_linked_at: '2026-08-27T14:10:31Z',
};

describe('the store after enrolment', () => {
  test('a hosted machine gets the identity and pins, and keeps what it owns and applied by hand', () => {
    const hosted = { ...emptyHostState(), owned, local_resources: enrolled.local_resources };
    const after = enrolledState(hosted, identity('workstation', 'B'), pins('C'), AT);
    expect(after).toEqual({ ...hosted, identity: identity('workstation', 'B'), pins: pins('C') });
  });

  test('enrolling again as the same node of the same mesh keeps the declaration held and both fences', () => {
    const after = enrolledState(enrolled, identity('workstation', 'B'), pins('C'), AT);
    expect(after.identity).toEqual(identity('workstation', 'B'));
    expect(after.last_declaration).toEqual(enrolled.last_declaration);
    expect(after.highest_epoch).toBe(12);
    expect(after.owned).toEqual(owned);
    expect(after.sequence).toBe(7);
    expect(after.report_sequence).toBe(40);
    expect(after.known_good_version).toBe('0.1.0');
    expect(after.last_linked_at).toBeNull();
  });

  test('enrolling as another node of the same mesh drops the declaration held but keeps the epoch fence', () => {
    const after = enrolledState(enrolled, identity('laptop', 'B'), pins('C'), AT);
    expect(after.last_declaration).toBeNull();
    expect(after.highest_epoch).toBe(12);
    expect(after.owned).toEqual(owned);
  });

  test('enrolling under another controller key starts both fences again, and what the host owns stays its own', () => {
    const after = enrolledState(enrolled, identity('workstation', 'B'), pins('D'), AT);
    expect(after.last_declaration).toBeNull();
    expect(after.highest_epoch).toBe(0);
    expect(after.pins).toEqual(pins('D'));
    expect(after.owned).toEqual(owned);
  });

  test('an empty store is marked rebuilt, so the next full declaration may hand back what the node owned', () => {
    const after = enrolledState(emptyHostState(), identity('workstation', 'B'), pins('C'), AT);
    expect(after.store_rebuilt_at).toBe(AT);
  });

  test('a store that holds anything is not marked: the node keeps its own word on what it owns', () => {
    expect(enrolledState(enrolled, identity('workstation', 'B'), pins('C'), AT).store_rebuilt_at).toBeUndefined();
    expect(enrolledState({ ...emptyHostState(), owned }, identity('workstation', 'B'), pins('C'), AT).store_rebuilt_at).toBeUndefined();
  });

  test('the mark survives an enrolment again as the same node before the full declaration came, and not as another node', () => {
    const first = enrolledState(emptyHostState(), identity('workstation', 'B'), pins('C'), AT);
    const withOverlay = { ...first, owned };
    expect(enrolledState(withOverlay, identity('workstation', 'E'), pins('C'), '2026-08-28T10:00:00.000Z').store_rebuilt_at).toBe(AT);
    expect(enrolledState(withOverlay, identity('laptop', 'E'), pins('C'), '2026-08-28T10:00:00.000Z').store_rebuilt_at).toBeUndefined();
  });
});
