import { Declaration, type DeclarationKind } from '../../schema/declaration';
import type { Envelope } from '../../schema/envelope';
import { parseContract } from '../../schema/parse';
import type { Resource } from '../../schema/resource';
import { envelopeDigest, sealEnvelope } from '../../actors/shared/crypto';

/** What to sign, as the controller composes it. */
export interface DeclarationFacts {
  node: string;
  generation: number;
  epoch?: number;
  kind?: DeclarationKind;
  resources: readonly Resource[];
  issuedAt?: Date;
}

/** A signed declaration and the digest the node's report will quote. */
export interface SignedDeclaration {
  envelope: Envelope;
  digest: string;
}

/**
 * A declaration checked against the contract and sealed with `signingKey` by the controller's
 * own code (sealEnvelope), as `sendComposed` does before it publishes: what a node receives is
 * byte for byte what a controller would send it.
 */
export function signedDeclaration(facts: DeclarationFacts, signingKey: Uint8Array | string): SignedDeclaration {
  const payload = parseContract(Declaration, {
    node: facts.node,
    epoch: facts.epoch ?? 1,
    generation: facts.generation,
    kind: facts.kind ?? 'full',
    issued_at: (facts.issuedAt ?? new Date()).toISOString(),
    resources: facts.resources,
  }, 'declaration');
  const envelope = sealEnvelope(payload, signingKey);
  return { envelope, digest: envelopeDigest(envelope) };
}
