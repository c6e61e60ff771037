import { MAX_DECLARATION_BYTES } from './bounds';
import { Envelope, ENVELOPE_FORMAT } from './envelope';
import { expectRefused, expectRoundTrip } from './expect-contract';

const envelope = {
  format: ENVELOPE_FORMAT,
  payload: 'eyJhIjoieCJ9',
  signature: `${'A'.repeat(86)}==`,
  signer: `${'B'.repeat(43)}=`,
};

describe('the envelope contract', () => {
  test('takes a signed envelope as it travels', () => {
    expect(expectRoundTrip(Envelope, envelope, 'envelope')).toEqual(envelope);
  });

  test('refuses another format tag, so a later format is never read as this one', () => {
    expectRefused(Envelope, { ...envelope, format: 'mesh-envelope-2' }, 'envelope', 'envelope.format');
  });

  test('refuses a field outside the signed payload, which nothing would vouch for', () => {
    expectRefused(Envelope, { ...envelope, epoch: 9 }, 'envelope', 'envelope.epoch');
  });

  test('refuses members that are not base64 text', () => {
    expectRefused(Envelope, { ...envelope, payload: '{"a":"x"}' }, 'envelope', 'envelope.payload', /base64/);
    expectRefused(Envelope, { ...envelope, signature: 'AAA' }, 'envelope', 'envelope.signature', /base64/);
    expectRefused(Envelope, { ...envelope, payload: '' }, 'envelope', 'envelope.payload');
    expectRefused(Envelope, { ...envelope, signer: undefined }, 'envelope', 'envelope.signer', /required/);
  });

  test('refuses a payload over the declaration bound by its length, before anything is decoded', () => {
    const over = 'A'.repeat(((MAX_DECLARATION_BYTES + 3) / 3) * 4);
    expectRefused(Envelope, { ...envelope, payload: over }, 'envelope', 'envelope.payload', /over the 32 MiB a declaration may be/);
    const at = 'A'.repeat(Math.floor(MAX_DECLARATION_BYTES / 3) * 4);
    expect(Envelope.parse({ ...envelope, payload: at }).payload).toHaveLength(at.length);
  });
});
