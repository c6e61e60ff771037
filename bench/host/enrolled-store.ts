import { emptyHostState, type HostState } from '../../schema/host-state';
import type { Resource } from '../../schema/resource';
import { generateNodeIdentity, generateSigningKeyPair, type NodeIdentity, type SigningKeyPair } from '../../actors/shared/crypto';
import { HostStore } from '../../actors/host/store/host-store';
import { signedDeclaration } from './signed-declaration';

/** What an enrolled store is made of. */
export interface EnrolledStoreFacts {
  node: string;
  identity: NodeIdentity;
  /** The controller whose key is pinned; its secret half signs `resources`, when given. */
  controller: Pick<SigningKeyPair, 'public_key'> & Partial<Pick<SigningKeyPair, 'secret_key'>>;
  brokerUrl: string;
  brokerFingerprint: string;
  /** When given, the store already holds a full declaration of these, generation 1. */
  resources?: readonly Resource[];
}

/**
 * The host state of a node that has enrolled (identity and pins) and, with `resources`, taken a
 * full declaration of them: what `nox-mesh-host enrol` and the first declaration leave behind,
 * made without a controller, so a host can be started enrolled in a benchmark.
 */
export function enrolledState(facts: EnrolledStoreFacts): HostState {
  if (facts.resources !== undefined && facts.controller.secret_key === undefined) throw new Error('enrolledState: a declaration needs the controller\'s secret key to sign it');
  const signed = facts.resources === undefined
    ? undefined
    : signedDeclaration({ node: facts.node, generation: 1, resources: facts.resources }, facts.controller.secret_key as string);
  return {
    ...emptyHostState(),
    identity: { node: facts.node, nkey_public: facts.identity.nkey_public, public_key: facts.identity.public_key, secret_key: facts.identity.secret_key },
    pins: { broker_url: facts.brokerUrl, broker_fingerprint: facts.brokerFingerprint, controller_public_key: facts.controller.public_key },
    ...(signed === undefined ? {} : { last_declaration: { envelope: signed.envelope, applied_generation: 1, digest: signed.digest }, highest_epoch: 1, sequence: 1 }),
  };
}

/**
 * Writes an enrolled store holding a full declaration of `resources` into `stateDir`, for a
 * node whose broker is `brokerUrl` (which need not answer: the host reconciles from its store
 * whether or not it is linked). Fresh keys each time.
 */
export async function writeEnrolledStore(stateDir: string, options: { node: string; resources: readonly Resource[]; brokerUrl: string }): Promise<void> {
  const state = enrolledState({
    node: options.node,
    identity: generateNodeIdentity(),
    controller: generateSigningKeyPair(),
    brokerUrl: options.brokerUrl,
    brokerFingerprint: '0'.repeat(64),
    resources: options.resources,
  });
  await new HostStore(stateDir).save(state);
}
