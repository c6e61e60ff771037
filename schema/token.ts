import * as z from 'zod';
import { Base64Bytes32, Sha256Hex } from './primitives';

/** Longest broker address a token carries, in UTF-8 bytes (its length travels in one byte). */
export const TOKEN_BROKER_URL_MAX_BYTES = 255;

const brokerUrl = z
  .string()
  .refine((text) => new TextEncoder().encode(text).length <= TOKEN_BROKER_URL_MAX_BYTES, { error: `a token carries a broker address of at most ${TOKEN_BROKER_URL_MAX_BYTES} bytes`, abort: true })
  .refine(isTlsBrokerUrl, { error: "expected the broker's TLS address with no path or credentials, like tls://mesh.example:4222" });

/** The most servers a token names: a cluster of at most five. */
export const TOKEN_BROKER_URLS_MAX = 5;

/**
 * The enrolment token: what a person carries from `mesh-control token issue` to
 * `nox-mesh-host enrol`. Four things: where the broker is, the fingerprint its certificate must
 * have (checked before anything is sent), the controller's signing key (which every declaration
 * is verified against), and the one-time right to join (`token_id` names it, `secret` proves it).
 * Its text form is `encodeToken`/`decodeToken` in actors/shared/crypto.
 */
export const EnrolmentToken = z.strictObject({
  /** The broker's address, `tls://host:port`. */
  broker_url: brokerUrl,
  /**
   * Every server of the broker's cluster, `broker_url` among them; absent for one server. All
   * present the one certificate `broker_fingerprint` pins. Together with `broker_url` they take
   * at most TOKEN_BROKER_URL_MAX_BYTES in the token's text form.
   */
  broker_urls: z.array(brokerUrl).min(2).max(TOKEN_BROKER_URLS_MAX).optional(),
  /** SHA-256 of the broker certificate's DER bytes, lower-case hex. */
  broker_fingerprint: Sha256Hex,
  /** The controller's Ed25519 public key, standard base64 of 32 bytes. */
  controller_public_key: Base64Bytes32,
  /** Names the token in the controller's records and in the broker user made for it. */
  token_id: z.string().regex(/^[0-9a-f]{16}$/, { error: 'expected a token id: 16 lowercase hex digits' }),
  /** The one-time secret, unpadded base64url of 32 bytes. Stored only hashed. */
  secret: z.string().regex(/^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/, { error: 'expected 32 bytes in unpadded base64url (43 characters)' }),
}).superRefine((token, ctx) => {
  if (token.broker_urls === undefined) return;
  if (!token.broker_urls.includes(token.broker_url)) ctx.addIssue({ code: 'custom', path: ['broker_urls'], message: 'the broker address is one of the servers named', input: token.broker_urls });
  if (new Set(token.broker_urls).size !== token.broker_urls.length) ctx.addIssue({ code: 'custom', path: ['broker_urls'], message: 'a server is named twice', input: token.broker_urls });
  if (new TextEncoder().encode(token.broker_urls.join(' ')).length > TOKEN_BROKER_URL_MAX_BYTES) {
    ctx.addIssue({ code: 'custom', path: ['broker_urls'], message: `a token carries its servers' addresses in at most ${TOKEN_BROKER_URL_MAX_BYTES} bytes`, input: token.broker_urls });
  }
});

/** An enrolment token, decoded. */
export type EnrolmentToken = z.infer<typeof EnrolmentToken>;

function isTlsBrokerUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return url.protocol === 'tls:' && url.hostname !== '' && url.username === '' && url.password === '' && (url.pathname === '' || url.pathname === '/') && url.search === '' && url.hash === '';
}
