import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { HostState, emptyHostState } from './host-state';
import { parseContract } from './parse';

const key = (fill: number) => Buffer.alloc(32, fill).toString('base64');

const identity = {
  node: 'workstation',
  nkey_public: 'UC6POXL7AOCJDLLJIG7BXDCQIVZORD3TWMPX4CT3ZAKCRNVBBJESPHW2',
  public_key: key(11),
  secret_key: key(12),
};
const pins = { broker_url: 'tls://hub.example.net:4222', broker_fingerprint: '9c'.repeat(32), controller_public_key: key(13) };
const state = {
  format: 1,
  identity,
  pins,
  last_declaration: {
    envelope: { format: 'mesh-envelope-1', payload: 'eyJub2RlIjoid29ya3N0YXRpb24ifQ==', signature: 'c2lnbmF0dXJl' },
    applied_generation: 7,
    digest: '3f'.repeat(32),
  },
  highest_epoch: 41,
  sequence: 7,
  report_sequence: 132,
  owned: { resources: [{ key: 'file:/etc/motd', shape: 'file', digest: 'a'.repeat(64), recorded_at: '2026-08-27T14:05:12Z' }] },
  applying: [],
  made_directories: ['/srv/app'],
  local_resources: [],
  known_good_version: '0.1.0',
  briefing: {
    node: 'workstation',
    adopted_at: '2026-08-27T14:02:00Z',
    lines: [{ status: 'ok', subject: 'container runtime', detail: 'docker 27.0, adopted' }],
    look_at: [],
  },
  last_linked_at: '2026-08-27T14:10:31Z',
};

describe('the host store', () => {
  it('round-trips an enrolled host store through JSON', () => {
    expect(expectRoundTrip(HostState, state, 'state.json')).toEqual(state);
  });

  it('reads a store written before the directories the host made were kept as having made none', () => {
    const { made_directories: _made, ...older } = state;
    expect(parseContract(HostState, older, 'state.json').made_directories).toEqual([]);
  });

  it('gives an empty store that is itself a valid store', () => {
    expect(expectRoundTrip(HostState, emptyHostState(), 'state.json')).toEqual(emptyHostState());
  });

  it('gives a fresh empty store each time, so changing one does not change the next', () => {
    const first = emptyHostState();
    first.owned.resources.push({ key: 'file:/etc/motd', shape: 'file', digest: 'a'.repeat(64), recorded_at: '2026-08-27T14:05:12Z' });
    expect(emptyHostState().owned.resources).toEqual([]);
  });

  it('keeps the stored envelope as it was, for the host to verify again', () => {
    const parsed = parseContract(HostState, state, 'state.json');
    expect(parsed.last_declaration?.envelope).toEqual(state.last_declaration.envelope);
  });

  it.each<RefusalCase>([
    { name: 'a store of a later format', input: { ...state, format: 2 }, path: 'state.json.format', says: /another version of nox-mesh-host/ },
    { name: 'an nkey that is not a user key', input: { ...state, identity: { ...identity, nkey_public: 'N' + identity.nkey_public.slice(1) } }, path: 'state.json.identity.nkey_public', says: /user nkey/ },
    { name: 'a secret key of the wrong length', input: { ...state, identity: { ...identity, secret_key: Buffer.alloc(64).toString('base64') } }, path: 'state.json.identity.secret_key', says: /32 bytes/ },
    { name: 'a broker address over http', input: { ...state, pins: { ...pins, broker_url: 'http://hub.example.net:4222' } }, path: 'state.json.pins.broker_url', says: /broker address like/ },
    { name: 'a broker fingerprint with colons', input: { ...state, pins: { ...pins, broker_fingerprint: '9C:'.repeat(31) + '9C' } }, path: 'state.json.pins.broker_fingerprint', says: /SHA-256/ },
    { name: 'a last declaration without its envelope', input: { ...state, last_declaration: { applied_generation: 7, digest: '3f'.repeat(32) } }, path: 'state.json.last_declaration.envelope', says: /required/ },
    { name: 'a negative highest epoch', input: { ...state, highest_epoch: -1 }, path: 'state.json.highest_epoch', says: /must not be negative/ },
    { name: 'a briefing that stores an outcome', input: { ...state, briefing: { ...state.briefing, outcome: 'ok' } }, path: 'state.json.briefing.outcome', says: /derived/ },
    { name: 'identity left out rather than null', input: { ...state, identity: undefined }, path: 'state.json.identity', says: /required/ },
    { name: 'a field this format does not have', input: { ...state, attempts: 3 }, path: 'state.json.attempts', says: /unknown field/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(HostState, input, 'state.json', path, says);
  });

  it('never quotes the secret key back when refusing a store', () => {
    const secret = key(99);
    const violation = expectRefused(HostState, { ...state, identity: { ...identity, secret_key: secret, public_key: 'bad' } }, 'state.json', 'state.json.identity.public_key');
    expect(JSON.stringify({ message: violation.message, issues: violation.issues, next: violation.next })).not.toContain(secret);
  });
});
