import { createHash, timingSafeEqual } from 'node:crypto';
import type * as z from 'zod';
import { canonicalBytes } from '../../../schema/canonical';
import { Envelope, ENVELOPE_FORMAT } from '../../../schema/envelope';
import { parseContract } from '../../../schema/parse';
import { decodeBase64, encodeBase64 } from './base64';
import {
  DECLARATION_CONTEXT,
  EnvelopeMalformed,
  ForeignSigner,
  PayloadNotCanonical,
  SignatureInvalid,
  type EnvelopeContext,
} from './envelope-errors';
import { ed25519Sign, ed25519Verify, SIGNATURE_BYTES } from './ed25519';
import { publicKeyBytes, signingKeyPairOf, type KeyInput } from './keys';

/**
 * Signs a payload: its canonical JSON bytes, a detached Ed25519 signature over exactly those
 * bytes, and the signer's public key. `signingSecretKey` is the 32-byte seed or libsodium's
 * 64-byte secret key, as base64 or bytes.
 */
export function sealEnvelope(payload: unknown, signingSecretKey: KeyInput): Envelope {
  const pair = signingKeyPairOf(signingSecretKey, 'the signing key');
  const bytes = canonicalBytes(payload);
  const signature = ed25519Sign(bytes, pair.seed);
  return { format: ENVELOPE_FORMAT, payload: encodeBase64(bytes), signature: encodeBase64(signature), signer: encodeBase64(pair.publicKey) };
}

/**
 * Opens an envelope that must have been signed by `trustedSignerPublicKey`, and returns its
 * payload parsed by `payloadSchema`. Checked every time, in this order, each refusal its own
 * condition: the envelope's shape (EnvelopeMalformed), the signer is the pinned key
 * (ForeignSigner), the signature over the exact payload bytes (SignatureInvalid), the bytes are
 * the canonical JSON of what they decode to (PayloadNotCanonical), the payload fits the schema
 * (ContractViolation, naming `context.label` and the failing field). Nothing of the payload is
 * looked at before the signature verified.
 */
export function openEnvelope<S extends z.ZodType>(
  envelope: unknown,
  trustedSignerPublicKey: KeyInput,
  payloadSchema: S,
  context: EnvelopeContext = DECLARATION_CONTEXT,
): z.output<S> {
  return openEnvelopeWithDigest(envelope, trustedSignerPublicKey, payloadSchema, context).value;
}

/** What openEnvelopeWithDigest opened: the payload, the envelope as its contract parsed it, and its digest. */
export interface OpenedEnvelope<T> {
  value: T;
  envelope: Envelope;
  /** As envelopeDigest gives it. */
  digest: string;
}

/**
 * openEnvelope, with the same checks in the same order, also giving the envelope as its
 * contract parsed it and the digest of its payload bytes: what a host stores and quotes, read
 * off the one decoding the checks made.
 */
export function openEnvelopeWithDigest<S extends z.ZodType>(
  envelope: unknown,
  trustedSignerPublicKey: KeyInput,
  payloadSchema: S,
  context: EnvelopeContext = DECLARATION_CONTEXT,
): OpenedEnvelope<z.output<S>> {
  const trusted = publicKeyBytes(trustedSignerPublicKey, 'the trusted signer key');
  const { parsed, payload, signature, signer } = decodeEnvelope(envelope, context);

  if (signer.length !== trusted.length || !timingSafeEqual(signer, trusted)) {
    throw new ForeignSigner(context, encodeBase64(signer), encodeBase64(trusted));
  }
  if (signature.length !== SIGNATURE_BYTES) {
    throw new SignatureInvalid(context, `the signature is ${signature.length} bytes, expected ${SIGNATURE_BYTES}`);
  }
  if (!ed25519Verify(signature, payload, trusted)) {
    throw new SignatureInvalid(context, 'the signature does not match the payload');
  }

  const value = parseContract(payloadSchema, parseCanonical(payload, context), context.label, {
    next: `nothing from it was used; the ${context.label} is signed by the trusted key but does not match this version's format: upgrade whichever of mesh-control and nox-mesh-host is older`,
  });
  return { value, envelope: parsed, digest: createHash('sha256').update(payload).digest('hex') };
}

/**
 * Lower-case hex SHA-256 of the envelope's payload bytes: the digest a report quotes to say
 * which declaration it answers. Since the bytes are canonical it equals `digestOf(payload)`.
 */
export function envelopeDigest(envelope: Envelope, context: EnvelopeContext = DECLARATION_CONTEXT): string {
  return createHash('sha256').update(decodeEnvelope(envelope, context).payload).digest('hex');
}

function decodeEnvelope(envelope: unknown, context: EnvelopeContext): { parsed: Envelope; payload: Uint8Array; signature: Uint8Array; signer: Uint8Array } {
  const shape = Envelope.safeParse(envelope);
  if (!shape.success) throw new EnvelopeMalformed(context, describeShape(envelope, shape.error), shape.error);
  const decode = (field: 'payload' | 'signature' | 'signer'): Uint8Array => {
    const bytes = decodeBase64(shape.data[field]);
    if (bytes === undefined) throw new EnvelopeMalformed(context, `${field} is not canonical base64`);
    return bytes;
  };
  return { parsed: shape.data, payload: decode('payload'), signature: decode('signature'), signer: decode('signer') };
}

function describeShape(envelope: unknown, error: z.ZodError): string {
  if (envelope === null || typeof envelope !== 'object' || Array.isArray(envelope)) {
    return `expected an object with format, payload, signature and signer, found ${envelope === null ? 'null' : Array.isArray(envelope) ? 'an array' : typeof envelope}`;
  }
  return error.issues
    .map((issue) => {
      const field = issue.path.join('.');
      if (issue.code === 'unrecognized_keys') return `unexpected field ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
      return field === '' ? issue.message : `${field}: ${issue.message}`;
    })
    .join('; ');
}

function parseCanonical(payload: Uint8Array, context: EnvelopeContext): unknown {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(payload));
  } catch {
    throw new PayloadNotCanonical(context, 'it is not UTF-8 JSON');
  }
  const again = canonicalBytes(value);
  if (!Buffer.from(again).equals(Buffer.from(payload))) {
    throw new PayloadNotCanonical(context, 'its bytes differ from the canonical form of the same value');
  }
  return value;
}
