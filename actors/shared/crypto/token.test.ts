import { createHash } from 'node:crypto';
import { EnrolmentToken } from '../../../schema/token';
import { isOperatorError } from '../operator-error';
import { decodeBase64Url, encodeBase64 } from './base64';
import { CROCKFORD_ALPHABET, encodeCrockford, groupForReading } from './crockford-base32';
import { brokerPasswordFor, decodeToken, encodeToken, generateTokenCredentials, TOKEN_PREFIX, tokenSecretHash } from './token';
import { TokenMalformed, TokenMistyped } from './token-errors';
import { seededRandom } from '../testing/seeded-random';

const token: EnrolmentToken = {
  broker_url: 'tls://mesh.example:4222',
  broker_fingerprint: createHash('sha256').update('broker certificate').digest('hex'),
  controller_public_key: encodeBase64(Uint8Array.from({ length: 32 }, (_, i) => 200 - i)),
  token_id: '0f1e2d3c4b5a6978',
  secret: 'q3Vt0Lr8x1YbNfZ2sW9dK4hJ7pGmE6aC5iT0uQyRoPk',
};
const text = encodeToken(token);

// Every refusal met in this file, to check none of them gives the secret away.
const refusals: Error[] = [];
function refusalOf(input: string): Error {
  try {
    decodeToken(input);
  } catch (error) {
    refusals.push(error as Error);
    return error as Error;
  }
  throw new Error('expected the token to be refused');
}


describe('enrolment token text', () => {
  it('reads back the token it wrote', () => {
    expect(decodeToken(text)).toEqual(token);
    expect(decodeToken(encodeToken({ ...token, ...generateTokenCredentials() })).token_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('is one line: the prefix, then upper-case Crockford symbols in groups of six', () => {
    expect(text.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(text).toMatch(/^nmt1-(?:[0-9A-HJKMNP-TV-Z]{6}-)*[0-9A-HJKMNP-TV-Z]{1,6}$/);
  });

  it('reads a token typed in lower case, without separators, with O for 0 and l for 1, or wrapped over lines', () => {
    const body = text.slice(TOKEN_PREFIX.length);
    expect(decodeToken(text.toLowerCase())).toEqual(token);
    expect(decodeToken(`NMT1-${body}`)).toEqual(token);
    expect(decodeToken(TOKEN_PREFIX + body.replace(/-/g, ''))).toEqual(token);
    expect(decodeToken(TOKEN_PREFIX + body.replace(/0/g, 'O').replace(/1/g, 'l'))).toEqual(token);
    expect(decodeToken(`  ${TOKEN_PREFIX}${body.slice(0, 50)}\n${body.slice(50)}\n`)).toEqual(token);
  });

  it('reports every substitution of one symbol by another, at every position after the prefix, as mistyped', () => {
    let checked = 0;
    for (let at = TOKEN_PREFIX.length; at < text.length; at += 1) {
      if (text[at] === '-') continue;
      for (const symbol of CROCKFORD_ALPHABET) {
        if (symbol === text[at]) continue;
        const refusal = refusalOf(text.slice(0, at) + symbol + text.slice(at + 1));
        if (!(refusal instanceof TokenMistyped)) throw new Error(`substituting ${symbol} at ${at + 1} gave ${refusal.name}: ${refusal.message}`);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(6000);
  });

  it('reports a character no token uses with that character and its position', () => {
    const random = seededRandom(42);
    for (let i = 0; i < 300; i += 1) {
      let at = TOKEN_PREFIX.length + Math.floor(random() * (text.length - TOKEN_PREFIX.length));
      if (text[at] === '-') at -= 1;
      const foreign = ['U', 'u', '*', '#', '!', '.', 'é'][Math.floor(random() * 7)] as string;
      const refusal = refusalOf(text.slice(0, at) + foreign + text.slice(at + 1));
      expect(refusal).toBeInstanceOf(TokenMistyped);
      expect((refusal as TokenMistyped).position).toBe(at + 1);
      expect(refusal.message).toContain(`at position ${at + 1}`);
      expect((refusal as TokenMistyped).value).toBe(foreign);
      expect((refusal as TokenMistyped).next).toContain('mesh-control token issue');
    }
  });

  it('counts the position in the text as pasted, leading spaces included', () => {
    const refusal = refusalOf(`   ${text.slice(0, 10)}U${text.slice(11)}`);
    expect((refusal as TokenMistyped).position).toBe(14);
  });

  it('refuses text with another prefix, saying what a token starts with', () => {
    for (const input of ['', 'hello', text.slice(TOKEN_PREFIX.length), `nmt${text.slice(TOKEN_PREFIX.length)}`]) {
      const refusal = refusalOf(input);
      expect(refusal).toBeInstanceOf(TokenMalformed);
      expect(refusal.message).toContain('starts with nmt1-');
    }
  });

  it('refuses a token of a later text version, saying to upgrade', () => {
    const refusal = refusalOf(`nmt2-${text.slice(TOKEN_PREFIX.length)}`);
    expect(refusal).toBeInstanceOf(TokenMalformed);
    expect((refusal as TokenMalformed).next).toMatch(/upgrade nox-mesh-host/);
  });

  it('refuses a token whose checksum holds but whose version byte is unknown', () => {
    const body = Buffer.from([3, 0, 0xff, ...new Uint8Array(104)]);
    const later = TOKEN_PREFIX + groupForReading(encodeCrockford(Buffer.concat([body, createHash('sha256').update(body).digest().subarray(0, 5)])));
    const refusal = refusalOf(later);
    expect(refusal).toBeInstanceOf(TokenMalformed);
    expect(refusal.message).toMatch(/version 3 token/);
  });

  it('carries every server of a cluster, the address to try first first', () => {
    const servers = ['tls://10.0.0.1:4222', 'tls://10.0.0.2:4222', 'tls://10.0.0.3:4222'];
    const clustered = { ...token, broker_url: 'tls://10.0.0.2:4222', broker_urls: servers };
    const back = decodeToken(encodeToken(clustered));
    expect(back.broker_url).toBe('tls://10.0.0.2:4222');
    expect(back.broker_urls).toEqual(['tls://10.0.0.2:4222', 'tls://10.0.0.1:4222', 'tls://10.0.0.3:4222']);
    expect(back.secret).toBe(token.secret);
  });

  it('refuses to encode a cluster token whose addresses do not fit its one length byte', () => {
    const long = (n: number) => `tls://${'m'.repeat(60)}${n}.example:4222`;
    expect(() => encodeToken({ ...token, broker_url: long(1), broker_urls: [long(1), long(2), long(3), long(4)] })).toThrow(/255 bytes/);
  });

  it('refuses a token cut short, saying the end is missing', () => {
    for (const keep of [text.length - 1, text.length - 2, text.length - 9, Math.floor(text.length / 2), TOKEN_PREFIX.length + 8, TOKEN_PREFIX.length + 2, TOKEN_PREFIX.length]) {
      const refusal = refusalOf(text.slice(0, keep));
      expect(refusal).toBeInstanceOf(TokenMalformed);
    }
    expect(refusalOf(text.slice(0, text.length - 3)).message).toMatch(/the end is missing/);
  });

  it('refuses a token with a character added, as malformed rather than as a bad signature', () => {
    const refusal = refusalOf(`${text}7`);
    expect(refusal).toBeInstanceOf(TokenMalformed);
    expect(refusal.message).toMatch(/something was added/);
  });

  it('refuses a checked-out token whose broker address is not a TLS address', () => {
    const url = new TextEncoder().encode('http://mesh.example');
    const fields = [Buffer.from(token.broker_fingerprint, 'hex'), new Uint8Array(32), new Uint8Array(8), new Uint8Array(32)];
    const body = Buffer.concat([Uint8Array.from([1, url.length, url.length ^ 0xff]), url, ...fields]);
    const refusal = refusalOf(TOKEN_PREFIX + encodeCrockford(Buffer.concat([body, createHash('sha256').update(body).digest().subarray(0, 5)])));
    expect(refusal).toBeInstanceOf(TokenMalformed);
    expect(refusal.message).toContain('broker_url');
  });

  it('will not encode a token that would not decode', () => {
    expect(() => encodeToken({ ...token, broker_url: 'nats://mesh.example:4222' })).toThrow(/broker_url/);
    expect(() => encodeToken({ ...token, broker_url: `tls://${'a'.repeat(250)}.example:4222` })).toThrow(/at most 255 bytes/);
    expect(() => encodeToken({ ...token, secret: 'short' })).toThrow(/secret/);
  });

  it('carries broker addresses of any length up to 255 bytes', () => {
    for (const host of ['a', 'broker.mesh.internal', `${'x'.repeat(240)}.ex`]) {
      const t = { ...token, broker_url: `tls://${host}:4222` };
      expect(decodeToken(encodeToken(t))).toEqual(t);
    }
  });

  it('never gives the secret away in any refusal', () => {
    // Runs last: `refusals` holds every refusal the tests above met (thousands of them).
    expect(refusals.length).toBeGreaterThan(6000);
    const secret = decodeBase64Url(token.secret) as Uint8Array;
    const forms = [token.secret, Buffer.from(secret).toString('hex'), Buffer.from(secret).toString('base64'), encodeCrockford(secret).slice(1, 40)];
    const body = text.slice(TOKEN_PREFIX.length).replace(/-/g, '');
    // Not even a run of the token's own symbols: nothing in a message is copied from the token.
    for (let at = 0; at + 12 <= body.length; at += 6) forms.push(body.slice(at, at + 12));
    const leaks: string[] = [];
    for (const refusal of refusals) {
      if (!isOperatorError(refusal)) leaks.push(`not an operator error: ${refusal.message}`);
      const shown = `${refusal.message}\n${(refusal as TokenMistyped).toText()}\n${JSON.stringify((refusal as TokenMistyped).toJSON())}`.toUpperCase();
      for (const form of forms) if (shown.includes(form.toUpperCase())) leaks.push(shown);
    }
    expect(leaks).toEqual([]);
  });
});

describe('token secrets at rest and at the broker', () => {
  it('hashes the secret under its own label, the same way every time', () => {
    const hash = tokenSecretHash(token.secret);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenSecretHash(decodeBase64Url(token.secret) as Uint8Array)).toBe(hash);
    expect(hash).not.toBe(createHash('sha256').update(decodeBase64Url(token.secret) as Uint8Array).digest('hex'));
    expect(tokenSecretHash(generateTokenCredentials().secret)).not.toBe(hash);
  });

  it('derives a broker password per token that neither is the secret nor its stored hash', () => {
    const password = brokerPasswordFor(token.secret, token.token_id);
    expect(password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(brokerPasswordFor(token.secret, token.token_id)).toBe(password);
    expect(brokerPasswordFor(token.secret, 'ffffffffffffffff')).not.toBe(password);
    expect(brokerPasswordFor(generateTokenCredentials().secret, token.token_id)).not.toBe(password);
    expect(password).not.toBe(token.secret);
    expect(tokenSecretHash(token.secret)).not.toContain(Buffer.from(password, 'base64url').toString('hex'));
  });

  it('refuses a secret that is not 32 bytes of base64url, without quoting it', () => {
    expect(() => tokenSecretHash('c2hvcnQ')).toThrow(RangeError);
    expect(() => tokenSecretHash('c2hvcnQ')).not.toThrow(/c2hvcnQ/);
  });
});
