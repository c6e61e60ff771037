import * as z from 'zod';
import { base64DecodedBytes, bytesText, MAX_DECLARATION_BYTES } from './bounds';

/** The format tag every signed envelope carries; a different tag is a different format. */
export const ENVELOPE_FORMAT = 'mesh-envelope-1';

// A whole-string character class and a length test rather than one regular expression of
// repeated groups, whose backtracking overflows the stack on a text of some megabytes.
const base64Text = z.string().refine((text) => text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text), 'expected base64 text');
const PAYLOAD_MAX_CHARS = Math.ceil(MAX_DECLARATION_BYTES / 3) * 4;

/**
 * A signed message: the canonical JSON bytes of a payload (base64), a detached Ed25519
 * signature over exactly those bytes, and the public key of the signer. The signature covers
 * the bytes as sent, never a re-serialisation, so what is verified is what is read.
 *
 * The payload is at most MAX_DECLARATION_BYTES once decoded (schema/bounds.ts).
 *
 * Every member is required and no other is allowed: a field outside the signed payload would
 * be unsigned and could only mislead.
 */
export const Envelope = z.strictObject({
  format: z.literal(ENVELOPE_FORMAT),
  // Its length first, and nothing more is checked of a payload over the bound.
  payload: z
    .string()
    .refine((text) => text.length <= PAYLOAD_MAX_CHARS && base64DecodedBytes(text) <= MAX_DECLARATION_BYTES, {
      error: (issue) => `the signed payload is ${bytesText(base64DecodedBytes(issue.input as string))}, over the ${bytesText(MAX_DECLARATION_BYTES)} a declaration may be`,
      abort: true,
    })
    .pipe(base64Text.min(1, 'the payload is empty')),
  signature: base64Text,
  signer: base64Text,
});

/** A signed envelope as it travels. */
export type Envelope = z.infer<typeof Envelope>;
