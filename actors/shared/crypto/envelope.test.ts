import * as z from 'zod';
import { digestOf } from '../../../schema/canonical';
import { ContractViolation } from '../../../schema/parse';
import { isOperatorError } from '../operator-error';
import { decodeBase64, encodeBase64 } from './base64';
import { envelopeDigest, openEnvelope, sealEnvelope } from './envelope';
import { EnvelopeMalformed, ForeignSigner, PayloadNotCanonical, SignatureInvalid } from './envelope-errors';
import { generateSigningKeyPair, signingKeyPairOf } from './keys';
import { ready, sodium } from './sodium';

// A stand-in payload contract: the envelope is generic over whatever schema the caller passes.
const Payload = z.strictObject({ node: z.string(), epoch: z.int(), generation: z.int(), items: z.array(z.string()) });
const payload = { node: 'web-1', epoch: 4, generation: 12, items: ['motd', 'nginx'] };

beforeAll(ready);

describe('signed envelopes', () => {
  it('opens what it sealed, with the same payload', () => {
    const controller = generateSigningKeyPair();
    const envelope = sealEnvelope(payload, controller.secret_key);
    expect(envelope.format).toBe('mesh-envelope-1');
    expect(envelope.signer).toBe(controller.public_key);
    expect(new TextDecoder().decode(decodeBase64(envelope.payload))).toBe('{"epoch":4,"generation":12,"items":["motd","nginx"],"node":"web-1"}');
    expect(openEnvelope(envelope, controller.public_key, Payload)).toEqual(payload);
  });

  it('opens an envelope after it crossed the wire as JSON text', () => {
    const controller = generateSigningKeyPair();
    const wire = JSON.stringify(sealEnvelope(payload, controller.secret_key), null, 2);
    expect(openEnvelope(JSON.parse(wire), controller.public_key, Payload)).toEqual(payload);
  });

  it('refuses a payload altered after signing', () => {
    const controller = generateSigningKeyPair();
    const envelope = sealEnvelope(payload, controller.secret_key);
    const altered = { ...envelope, payload: encodeBase64(new TextEncoder().encode('{"epoch":5,"generation":12,"items":["motd","nginx"],"node":"web-1"}')) };
    expect(() => openEnvelope(altered, controller.public_key, Payload)).toThrow(SignatureInvalid);
  });

  it('refuses a declaration signed by another controller', () => {
    const controller = generateSigningKeyPair();
    const impostor = generateSigningKeyPair();
    const refusal = catchError(() => openEnvelope(sealEnvelope(payload, impostor.secret_key), controller.public_key, Payload));
    expect(refusal).toBeInstanceOf(ForeignSigner);
    expect((refusal as ForeignSigner).signer).toBe(impostor.public_key);
    expect((refusal as ForeignSigner).next).toContain('nox-mesh-host enrol --token');
  });

  it('refuses an envelope that names the pinned signer but was signed by another key', () => {
    const controller = generateSigningKeyPair();
    const impostor = generateSigningKeyPair();
    const forged = { ...sealEnvelope(payload, impostor.secret_key), signer: controller.public_key };
    expect(() => openEnvelope(forged, controller.public_key, Payload)).toThrow(SignatureInvalid);
  });

  it('refuses a truncated signature', () => {
    const controller = generateSigningKeyPair();
    const envelope = sealEnvelope(payload, controller.secret_key);
    const signature = decodeBase64(envelope.signature) as Uint8Array;
    const truncated = { ...envelope, signature: encodeBase64(signature.subarray(0, 63)) };
    expect(() => openEnvelope(truncated, controller.public_key, Payload)).toThrow(SignatureInvalid);
    expect(() => openEnvelope(truncated, controller.public_key, Payload)).toThrow(/63 bytes, expected 64/);
    expect(() => openEnvelope({ ...envelope, signature: '' }, controller.public_key, Payload)).toThrow(SignatureInvalid);
  });

  it('refuses a genuinely signed payload that is not canonical JSON', () => {
    const controller = generateSigningKeyPair();
    const secretKey = signingKeyPairOf(controller.secret_key).secretKey;
    const signRaw = (text: string) => {
      const bytes = new TextEncoder().encode(text);
      return { format: 'mesh-envelope-1', payload: encodeBase64(bytes), signature: encodeBase64(sodium().crypto_sign_detached(bytes, secretKey)), signer: controller.public_key };
    };
    for (const text of [
      '{"node":"web-1","epoch":4,"generation":12,"items":["motd","nginx"]}', // keys out of order
      '{"epoch":4, "generation":12,"items":["motd","nginx"],"node":"web-1"}', // white space
      '{"epoch":4.0,"generation":12,"items":["motd","nginx"],"node":"web-1"}', // a number spelled differently
      '{"epoch":3,"epoch":4,"generation":12,"items":["motd","nginx"],"node":"web-1"}', // a duplicate key
      '\ufeff{"epoch":4,"generation":12,"items":["motd","nginx"],"node":"web-1"}', // a byte order mark
      '{"epoch":4,"generation":12,"items":["motd","nginx"],"node":"web-1"', // not JSON at all
    ]) {
      expect(() => openEnvelope(signRaw(text), controller.public_key, Payload)).toThrow(PayloadNotCanonical);
    }
    // The same signing path with the canonical text opens, so the refusals above are about form.
    expect(openEnvelope(signRaw('{"epoch":4,"generation":12,"items":["motd","nginx"],"node":"web-1"}'), controller.public_key, Payload)).toEqual(payload);
  });

  it('refuses a genuinely signed payload that does not match the schema, naming the field', () => {
    const controller = generateSigningKeyPair();
    const envelope = sealEnvelope({ ...payload, epoch: 'four' }, controller.secret_key);
    const refusal = catchError(() => openEnvelope(envelope, controller.public_key, Payload));
    expect(refusal).toBeInstanceOf(ContractViolation);
    expect((refusal as ContractViolation).message).toContain('declaration.epoch');
  });

  it('refuses garbage with a clear error that says it is not an envelope', () => {
    const controller = generateSigningKeyPair();
    const envelope = sealEnvelope(payload, controller.secret_key);
    const { signature: _signature, ...unsigned } = envelope;
    const cases: [unknown, RegExp][] = [
      [null, /found null/],
      ['{"format":"mesh-envelope-1"}', /found string/],
      [[envelope], /found an array/],
      [{}, /format/],
      [unsigned, /signature/],
      [{ ...envelope, format: 'mesh-envelope-2' }, /format/],
      [{ ...envelope, payload: 'not base64!' }, /payload/],
      [{ ...envelope, payload: '' }, /payload/],
      [{ ...envelope, signer: 42 }, /signer/],
      [{ ...envelope, note: 'trust me' }, /unexpected field "note"/],
      [{ ...envelope, payload: `${envelope.payload.slice(0, -2)}x=` }, /payload/],
    ];
    for (const [input, reason] of cases) {
      const refusal = catchError(() => openEnvelope(input, controller.public_key, Payload));
      expect(refusal).toBeInstanceOf(EnvelopeMalformed);
      expect((refusal as EnvelopeMalformed).message).toMatch(/not a signed mesh envelope/);
      expect((refusal as EnvelopeMalformed).message).toMatch(reason);
    }
  });

  it('uses the label the caller gives in what it says', () => {
    const controller = generateSigningKeyPair();
    const impostor = generateSigningKeyPair();
    const context = { label: 'report', whenForeign: 're-enrol node web-1' };
    const refusal = catchError(() => openEnvelope(sealEnvelope(payload, impostor.secret_key), controller.public_key, Payload, context));
    expect((refusal as ForeignSigner).message).toMatch(/^the report is signed by an untrusted key/);
    expect((refusal as ForeignSigner).next).toBe('re-enrol node web-1');
  });

  it('digests the payload bytes, the same digest as the canonical digest of the payload', () => {
    const controller = generateSigningKeyPair();
    const envelope = sealEnvelope(payload, controller.secret_key);
    expect(envelopeDigest(envelope)).toBe(digestOf(payload));
    expect(envelopeDigest(sealEnvelope({ ...payload, generation: 13 }, controller.secret_key))).not.toBe(envelopeDigest(envelope));
  });

  it('refuses every way with an operator error, never a stray exception', () => {
    const controller = generateSigningKeyPair();
    for (const input of [undefined, 0, true, { format: 'mesh-envelope-1', payload: 'AA==', signature: 'AA==', signer: 'AA==' }]) {
      expect(isOperatorError(catchError(() => openEnvelope(input, controller.public_key, Payload)))).toBe(true);
    }
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal, but it was accepted');
}
