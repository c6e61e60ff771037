import { Declaration } from '../../../schema/declaration';
import type { HostState } from '../../../schema/host-state';
import { ContractViolation } from '../../../schema/parse';
import type { RefusalReason } from '../../../schema/report';
import { SHAPES_FOR_HOST_KIND, type ResourceShape } from '../../../schema/resource';
import { openEnvelopeWithDigest, type OpenedEnvelope } from '../../shared/crypto/envelope';
import { EnvelopeMalformed, ForeignSigner, PayloadNotCanonical, SignatureInvalid } from '../../shared/crypto/envelope-errors';
import type { Envelope } from '../../../schema/envelope';
import { ownUnitRefusal } from '../../shared/host-unit/own-unit';
import { DEFAULT_SETTINGS } from '../host-context';
import { rememberVerified } from '../reconcile/verified-declarations';

/** A declaration the host may store and apply, with the digest its reports will quote. */
export interface Admitted {
  ok: true;
  declaration: Declaration;
  envelope: Envelope;
  digest: string;
}

/**
 * A declaration the host refuses whole: nothing of it is stored or applied. `generation` and
 * `epoch` are given only when the signature verified, since before that they are a stranger's
 * claims.
 */
export interface Refused {
  ok: false;
  reason: RefusalReason;
  detail: string;
  generation?: number;
  epoch?: number;
}

/** What the gate decided. */
export type Admission = Admitted | Refused;

/** What this host may be told to manage, beyond what the signature and the fences decide. */
export interface AdmissionRules {
  /** The host's own unit, which only its package manages. */
  hostUnit: string;
  /** The machine's root and the state directory, for the paths a declaration may not name. */
  root: string;
  stateDir: string;
  /** The shapes this kind of host takes (an episodic host: file, directory, action). */
  shapes: readonly ResourceShape[];
}

const DEFAULT_RULES: AdmissionRules = {
  hostUnit: DEFAULT_SETTINGS.hostUnit,
  root: DEFAULT_SETTINGS.root,
  stateDir: DEFAULT_SETTINGS.stateDir,
  shapes: SHAPES_FOR_HOST_KIND.resident,
};

/**
 * The gate every declaration passes, every time, before anything of it is stored: the envelope
 * verifies with the pinned controller key (bad_signature, foreign_key, malformed), it is
 * addressed to this node (wrong_node), it is not from an older controller epoch than one already
 * seen (stale_epoch: fencing a controller that lost its lease), it is newer than the declaration
 * held (older_generation: a replay, or one overtaken on the way), it does not name the host's
 * own unit or state (own_unit), and it names only shapes this host takes (shape_not_supported).
 * Broker certificates it pins must keep one this host pins now (malformed otherwise): taking
 * a set without it would cut the node off at its next connection.
 *
 * Pure apart from the signature check: the state is read, never written.
 */
export function admitDeclaration(envelope: unknown, state: HostState, rules: AdmissionRules = DEFAULT_RULES): Admission {
  if (state.identity === null || state.pins === null) {
    return { ok: false, reason: 'wrong_node', detail: 'this host is not enrolled, so no declaration is addressed to it' };
  }
  let opened: OpenedEnvelope<Declaration>;
  try {
    opened = openEnvelopeWithDigest(envelope, state.pins.controller_public_key, Declaration);
  } catch (error) {
    return refusedEnvelope(error);
  }
  const declaration = opened.value;
  const claims = { generation: declaration.generation, epoch: declaration.epoch };
  if (declaration.node !== state.identity.node) {
    return { ok: false, reason: 'wrong_node', detail: `the declaration is addressed to node "${declaration.node}", and this is "${state.identity.node}"`, ...claims };
  }
  if (declaration.epoch < state.highest_epoch) {
    return {
      ok: false,
      reason: 'stale_epoch',
      detail: `the declaration is from controller epoch ${declaration.epoch}, and this host has already taken declarations from epoch ${state.highest_epoch}: it comes from a controller that is no longer acting`,
      ...claims,
    };
  }
  const held = state.last_declaration;
  if (held !== null && declaration.generation <= held.applied_generation) {
    const same = held.applied_generation === declaration.generation;
    return {
      ok: false,
      reason: 'older_generation',
      detail: same
        ? `generation ${declaration.generation} is the one this host already holds; a declaration is taken once (a replay, or a redelivery after the host stopped before confirming it)`
        : `generation ${declaration.generation} is older than generation ${held.applied_generation}, which this host already holds: a replay, or a declaration overtaken on the way`,
      ...claims,
    };
  }
  const unreachable = brokerPinsUnreachable(declaration, state.pins);
  if (unreachable !== undefined) return { ok: false, reason: 'malformed', detail: unreachable, ...claims };
  const ownUnit = declaration.resources.map((resource) => ownUnitRefusal(resource, rules)).find((why) => why !== undefined);
  if (ownUnit !== undefined) return { ok: false, reason: 'own_unit', detail: ownUnit, ...claims };
  const allowed = new Set(rules.shapes);
  const foreignShape = declaration.resources.find((resource) => !allowed.has(resource.shape));
  if (foreignShape !== undefined) {
    return {
      ok: false,
      reason: 'shape_not_supported',
      detail: `this host takes only ${rules.shapes.join(', ')} resources, and the declaration names a ${foreignShape.shape}`,
      ...claims,
    };
  }
  // The envelope admitted is the one stored and applied: the pass that follows takes this check
  // as its own rather than verifying the same bytes again.
  rememberVerified(opened.envelope, state.pins.controller_public_key, declaration);
  return { ok: true, declaration, envelope: opened.envelope, digest: opened.digest };
}

// A rotation moves one step at a time: the signed set keeps a certificate the node pins now,
// so the node can always link again. Anything else is a controller's mistake, refused whole.
function brokerPinsUnreachable(declaration: Declaration, pins: NonNullable<HostState['pins']>): string | undefined {
  const given = declaration.broker_fingerprints;
  if (given === undefined) return undefined;
  const held = [pins.broker_fingerprint, ...(pins.next_broker_fingerprint === undefined ? [] : [pins.next_broker_fingerprint])];
  if (given.some((fingerprint) => held.includes(fingerprint))) return undefined;
  return `the declaration pins broker certificates sha256 ${given.join(', sha256 ')}, none of which this host pins now (sha256 ${held.join(', sha256 ')}): taking it would cut this node off from the broker; a certificate rotation announces the next certificate before the switch (mesh-control broker rotate-certificate)`;
}

function refusedEnvelope(error: unknown): Refused {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof ForeignSigner) return { ok: false, reason: 'foreign_key', detail };
  if (error instanceof SignatureInvalid) return { ok: false, reason: 'bad_signature', detail };
  if (error instanceof EnvelopeMalformed || error instanceof PayloadNotCanonical || error instanceof ContractViolation) {
    return { ok: false, reason: 'malformed', detail };
  }
  // A key in the store that cannot be read is not the sender's fault: it must not be reported
  // as a refusal of what was sent, so it is thrown to the caller.
  throw error;
}
