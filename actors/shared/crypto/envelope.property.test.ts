import * as fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod';
import { isOperatorError } from '../operator-error';
import { decodeBase64, encodeBase64 } from './base64';
import { openEnvelope, sealEnvelope } from './envelope';
import { generateSigningKeyPair } from './keys';
import { ready } from './sodium';

// Loose on purpose: a mutation that still parsed would otherwise be stopped by the schema, and
// the property is about what the signature and the canonical check let through.
const AnyPayload = z.unknown();
const original = { node: 'web-1', epoch: 4, generation: 12, kind: 'full', resources: [{ kind: 'file', path: '/etc/motd', content: 'hello' }] };

type Edit = { op: 'flip'; at: number; mask: number } | { op: 'insert'; at: number; byte: number } | { op: 'delete'; at: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
);

/** Where the edits land: the JSON text as it travels, or the decoded bytes of one field. */
const target = fc.constantFrom('wire-text', 'payload-bytes', 'signature-bytes', 'signer-bytes');

function applyEdits(bytes: Uint8Array, edits: readonly Edit[]): Uint8Array {
  const out = [...bytes];
  for (const e of edits) {
    if (e.op === 'insert') out.splice(e.at % (out.length + 1), 0, e.byte);
    else if (out.length === 0) continue;
    else if (e.op === 'flip') out[e.at % out.length] = (out[e.at % out.length] as number) ^ e.mask;
    else out.splice(e.at % out.length, 1);
  }
  return Uint8Array.from(out);
}

beforeAll(ready);

describe('signed envelopes under random damage', () => {
  it('never yields a payload other than the one signed: every mutation is refused or reads back the original', () => {
    const controller = generateSigningKeyPair();
    const envelope = sealEnvelope(original, controller.secret_key);
    const wire = new TextEncoder().encode(JSON.stringify(envelope));
    let accepted = 0;

    fc.assert(
      fc.property(target, fc.array(edit, { minLength: 1, maxLength: 4 }), (where, edits) => {
        let candidate: unknown;
        if (where === 'wire-text') {
          try {
            candidate = JSON.parse(new TextDecoder().decode(applyEdits(wire, edits)));
          } catch {
            return true; // no longer JSON: nothing reaches the opener
          }
        } else {
          const field = where === 'payload-bytes' ? 'payload' : where === 'signature-bytes' ? 'signature' : 'signer';
          candidate = { ...envelope, [field]: encodeBase64(applyEdits(decodeBase64(envelope[field]) as Uint8Array, edits)) };
        }
        try {
          const opened = openEnvelope(candidate, controller.public_key, AnyPayload);
          accepted += 1;
          return isDeepStrictEqual(opened, original);
        } catch (error) {
          return isOperatorError(error);
        }
      }),
      { numRuns: 2000, seed: 20260901 },
    );
    // Some mutations are harmless (a flipped bit in JSON white space, say); none may change the payload.
    expect(accepted).toBeLessThan(2000);
  });
});
