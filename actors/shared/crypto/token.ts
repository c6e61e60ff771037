import { createHash, createHmac, randomBytes } from 'node:crypto';
import { EnrolmentToken } from '../../../schema/token';
import { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from './base64';
import { decodeCrockford, encodeCrockford, groupForReading } from './crockford-base32';
import { TokenMalformed, TokenMistyped } from './token-errors';

/** Every token's text starts with this; the digit is the text form's version. */
export const TOKEN_PREFIX = 'nmt1-';

const VERSION = 1;
// A token naming every server of a cluster: the URL field holds their addresses separated by
// single spaces (no URL holds one), `broker_url` first. A host that reads only version 1 says
// to upgrade rather than misreading it.
const CLUSTER_VERSION = 2;
const CHECKSUM_BYTES = 5;
// Fingerprint, controller key, token id, secret.
const FIXED_FIELDS = [32, 32, 8, 32] as const;
const FIXED_BYTES = FIXED_FIELDS.reduce((sum, n) => sum + n, 0);
// Version, URL length, URL length complemented.
const HEADER_BYTES = 3;

/**
 * The token's text: `nmt1-` and Crockford base32 in groups of six, one line that survives
 * copying, reading aloud and retyping. The bytes underneath:
 *
 *   version (1) | url length L (1) | L xor 0xff (1) | broker URL (L, UTF-8) | broker fingerprint (32)
 *   | controller key (32) | token id (8) | secret (32) | checksum (5: first bytes of SHA-256 of all before)
 *
 * A token for a cluster is version 2: the URL field holds every server's address, separated by
 * single spaces, the one to try first first.
 *
 * The complemented length is there so a typo in the header reads as a typo: without it, a
 * changed length byte would look exactly like a token cut short. Every future version keeps
 * the trailing checksum, so a newer token is told apart from a mistyped one.
 */
export function encodeToken(token: EnrolmentToken): string {
  const checked = EnrolmentToken.safeParse(token);
  if (!checked.success) {
    // Paths and messages only: zod does not echo inputs, and the secret must not be printed.
    throw new RangeError(`cannot encode an invalid enrolment token: ${checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  const t = checked.data;
  const urls = t.broker_urls === undefined ? [t.broker_url] : [t.broker_url, ...t.broker_urls.filter((each) => each !== t.broker_url)];
  const url = new TextEncoder().encode(urls.join(' '));
  if (url.length > 255) throw new RangeError('cannot encode an enrolment token: its broker addresses take more than 255 bytes');
  const version = urls.length > 1 ? CLUSTER_VERSION : VERSION;
  const fields = [
    Buffer.from(t.broker_fingerprint, 'hex'),
    decodeBase64(t.controller_public_key) as Uint8Array,
    Buffer.from(t.token_id, 'hex'),
    decodeBase64Url(t.secret) as Uint8Array,
  ];
  const body = Buffer.concat([Uint8Array.from([version, url.length, url.length ^ 0xff]), url, ...fields]);
  return TOKEN_PREFIX + groupForReading(encodeCrockford(Buffer.concat([body, checksumOf(body)])));
}

/**
 * Reads a token as a person pasted or typed it: surrounding space trimmed, any case, group
 * separators and line breaks ignored, O read as 0 and I or L as 1. A token that does not check
 * out is TokenMistyped (naming a foreign character and its position when there is one); one
 * with another prefix, an unknown version, or cut short is TokenMalformed.
 */
export function decodeToken(text: string): EnrolmentToken {
  if (typeof text !== 'string') throw new TokenMalformed(`expected text starting with ${TOKEN_PREFIX}`);
  const start = text.length - text.trimStart().length;
  const trimmed = text.trim();
  const prefix = trimmed.slice(0, TOKEN_PREFIX.length).toLowerCase();
  if (prefix !== TOKEN_PREFIX) {
    if (/^nmt\d+-$/.test(prefix)) {
      throw new TokenMalformed(`it is a version ${prefix.slice(3, -1)} token (${prefix}…); this nox-mesh-host reads ${TOKEN_PREFIX}… tokens`, 'upgrade nox-mesh-host to the version of the controller that issued the token, then enrol again');
    }
    throw new TokenMalformed(`a token starts with ${TOKEN_PREFIX}, this starts with ${JSON.stringify(trimmed.slice(0, TOKEN_PREFIX.length))}`);
  }

  const decoded = decodeCrockford(trimmed.slice(TOKEN_PREFIX.length));
  if (decoded.kind === 'foreign') {
    throw new TokenMistyped({ character: decoded.character, position: start + TOKEN_PREFIX.length + decoded.index + 1 });
  }
  const { bytes, symbols, tidy } = decoded;
  if (bytes.length < HEADER_BYTES) throw new TokenMalformed(`it ends after ${symbols} characters; a token has well over a hundred`);

  const urlLength = bytes[1] as number;
  const expectedBytes = HEADER_BYTES + urlLength + FIXED_BYTES + CHECKSUM_BYTES;
  if (!checksumHolds(bytes, tidy)) {
    const headerIntact = (bytes[0] === VERSION || bytes[0] === CLUSTER_VERSION) && ((bytes[1] as number) ^ (bytes[2] as number)) === 0xff;
    const expectedSymbols = Math.ceil((expectedBytes * 8) / 5);
    if (headerIntact && symbols < expectedSymbols) {
      throw new TokenMalformed(`it has ${symbols} characters after ${TOKEN_PREFIX} (dashes not counted) where this token needs ${expectedSymbols}: the end is missing`);
    }
    if (headerIntact && symbols > expectedSymbols) {
      throw new TokenMalformed(`it has ${symbols} characters after ${TOKEN_PREFIX} (dashes not counted) where this token needs ${expectedSymbols}: something was added to it`);
    }
    throw new TokenMistyped({ checksum: true });
  }

  if (bytes[0] !== VERSION && bytes[0] !== CLUSTER_VERSION) {
    throw new TokenMalformed(`it is a version ${bytes[0]} token; this nox-mesh-host reads versions ${VERSION} and ${CLUSTER_VERSION}`, 'upgrade nox-mesh-host to the version of the controller that issued the token, then enrol again');
  }
  if ((urlLength ^ (bytes[2] as number)) !== 0xff || bytes.length !== expectedBytes) {
    throw new TokenMalformed(`its length does not match its contents (${bytes.length} bytes, its header says ${expectedBytes})`, 'issue a new token: mesh-control token issue');
  }
  return readFields(bytes, urlLength, bytes[0] === CLUSTER_VERSION);
}

/**
 * The form a token's secret is stored in: SHA-256 under a label of its own, lower-case hex. A
 * label keeps this hash from ever equalling a hash of the same bytes made for another purpose.
 */
export function tokenSecretHash(secret: string | Uint8Array): string {
  return createHash('sha256').update('novox-mesh token-secret v1\0').update(secretBytes(secret)).digest('hex');
}

/**
 * The broker password of the one-time user made for a token: HMAC-SHA256 keyed by the secret
 * over the token id, unpadded base64url. Both sides derive it; the secret itself never goes to
 * the broker, and the stored `tokenSecretHash` does not reveal the password.
 */
export function brokerPasswordFor(secret: string | Uint8Array, tokenId: string): string {
  return encodeBase64Url(createHmac('sha256', secretBytes(secret)).update(`novox-mesh broker-password v1\0${tokenId}`).digest());
}

/** A fresh token id and one-time secret, for `mesh-control token issue`. */
export function generateTokenCredentials(): { token_id: string; secret: string } {
  return { token_id: randomBytes(8).toString('hex'), secret: encodeBase64Url(randomBytes(32)) };
}

function checksumOf(body: Uint8Array): Buffer {
  return createHash('sha256').update(body).digest().subarray(0, CHECKSUM_BYTES);
}

function checksumHolds(bytes: Uint8Array, tidy: boolean): boolean {
  if (!tidy || bytes.length < HEADER_BYTES + CHECKSUM_BYTES) return false;
  const body = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  return checksumOf(body).equals(bytes.subarray(bytes.length - CHECKSUM_BYTES));
}

function readFields(bytes: Uint8Array, urlLength: number, cluster: boolean): EnrolmentToken {
  let offset = HEADER_BYTES;
  const take = (n: number): Uint8Array => bytes.subarray(offset, (offset += n));
  let brokerUrl: string;
  try {
    brokerUrl = new TextDecoder('utf-8', { fatal: true }).decode(take(urlLength));
  } catch {
    throw new TokenMalformed('its broker address is not UTF-8 text', 'issue a new token: mesh-control token issue');
  }
  const [fingerprint, key, id, secret] = FIXED_FIELDS.map((n) => take(n)) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  const urls = brokerUrl.split(' ');
  if (cluster !== urls.length > 1) {
    throw new TokenMalformed(cluster ? 'it is a cluster token naming one server' : 'it names several servers in a one-server token', 'issue a new token: mesh-control token issue');
  }
  const token = {
    broker_url: urls[0] as string,
    ...(cluster ? { broker_urls: urls } : {}),
    broker_fingerprint: Buffer.from(fingerprint).toString('hex'),
    controller_public_key: encodeBase64(key),
    token_id: Buffer.from(id).toString('hex'),
    secret: encodeBase64Url(secret),
  };
  const checked = EnrolmentToken.safeParse(token);
  if (!checked.success) {
    const fields = [...new Set(checked.error.issues.map((issue) => issue.path.join('.')))].join(', ');
    throw new TokenMalformed(`it checks out but holds an unusable ${fields}`, 'issue a new token with a valid broker address: mesh-control token issue');
  }
  return checked.data;
}

function secretBytes(secret: string | Uint8Array): Uint8Array {
  if (secret instanceof Uint8Array) return secret;
  const bytes = decodeBase64Url(secret);
  if (bytes === undefined || bytes.length !== 32) throw new RangeError('a token secret is base64url of 32 bytes');
  return bytes;
}
