import { expectRefused, expectRoundTrip } from './expect-contract';
import { EnrolmentToken } from './token';

const token = {
  broker_url: 'tls://mesh.example:4222',
  broker_fingerprint: 'ab'.repeat(32),
  controller_public_key: `${'C'.repeat(42)}A=`,
  token_id: '0f1e2d3c4b5a6978',
  secret: `${'s'.repeat(42)}A`,
};

describe('the enrolment token contract', () => {
  test('takes a token with a TLS broker address', () => {
    expect(expectRoundTrip(EnrolmentToken, token, 'token')).toEqual(token);
    expectRoundTrip(EnrolmentToken, { ...token, broker_url: 'tls://[fd00::1]:4222' }, 'token');
    expectRoundTrip(EnrolmentToken, { ...token, broker_url: 'tls://10.0.0.1' }, 'token');
  });

  test('refuses a broker address that is not TLS, since the pinned fingerprint is checked over TLS', () => {
    expectRefused(EnrolmentToken, { ...token, broker_url: 'nats://mesh.example:4222' }, 'token', 'token.broker_url', /tls:\/\//);
    expectRefused(EnrolmentToken, { ...token, broker_url: 'tls://user:pw@mesh.example:4222' }, 'token', 'token.broker_url');
    expectRefused(EnrolmentToken, { ...token, broker_url: 'tls://mesh.example:4222/path' }, 'token', 'token.broker_url');
    expectRefused(EnrolmentToken, { ...token, broker_url: 'mesh.example:4222' }, 'token', 'token.broker_url');
  });

  test('refuses a broker address longer than the token can carry', () => {
    expectRefused(EnrolmentToken, { ...token, broker_url: `tls://${'a'.repeat(250)}.example` }, 'token', 'token.broker_url', /255 bytes/);
  });

  test('refuses fields of the wrong size or spelling', () => {
    expectRefused(EnrolmentToken, { ...token, broker_fingerprint: 'AB'.repeat(32) }, 'token', 'token.broker_fingerprint');
    expectRefused(EnrolmentToken, { ...token, controller_public_key: `${'C'.repeat(42)}B=` }, 'token', 'token.controller_public_key');
    expectRefused(EnrolmentToken, { ...token, token_id: '0f1e2d3c4b5a697' }, 'token', 'token.token_id');
    expectRefused(EnrolmentToken, { ...token, secret: `${'s'.repeat(42)}B` }, 'token', 'token.secret');
    expectRefused(EnrolmentToken, { ...token, secret: `${'s'.repeat(42)}A=` }, 'token', 'token.secret');
  });

  test('refuses a field the token does not carry', () => {
    expectRefused(EnrolmentToken, { ...token, expires_at: '2026-09-01T00:00:00Z' }, 'token', 'token.expires_at');
  });
});
