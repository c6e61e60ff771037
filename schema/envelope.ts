import * as z from 'zod';
import { base64DecodedBytes, bytesText, MAX_DECLARATION_BYTES } from './bounds';

/** The format tag every signed envelope carries; a different tag is a different format. */
export const ENVELOPE_FORMAT = 'mesh-envelope-1';

const base64Text = z.string().regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, 'expected base64 text');

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
  payload: base64Text.min(1, 'the payload is empty').refine((text) => base64DecodedBytes(text) <= MAX_DECLARATION_BYTES, {
    error: (issue) => `the signed payload is ${bytesText(base64DecodedBytes(issue.input as string))}, over the ${bytesText(MAX_DECLARATION_BYTES)} a declaration may be`,
  }),
  signature: base64Text,
  signer: base64Text,
});

/** A signed envelope as it travels. */
export type Envelope = z.infer<typeof Envelope>;
