import { OperatorError } from '../operator-error';

/**
 * How a refused envelope is described: what it carried and what to do when a foreign key signed
 * it. The defaults speak for the node host opening a declaration, the main use.
 */
export interface EnvelopeContext {
  /** What the envelope carries, as a person calls it ('declaration', 'report'). */
  label: string;
  /** The next step when another key signed it. */
  whenForeign: string;
}

/** The defaults: a node host opening a declaration from its controller. */
export const DECLARATION_CONTEXT: EnvelopeContext = {
  label: 'declaration',
  whenForeign:
    "the declaration was not signed by this node's controller and nothing from it was used; if the mesh's controller key changed, re-enrol with a new token: nox-mesh-host enrol --token <token from mesh-control token issue --node NAME>",
};

/** What arrived is not a signed envelope at all (wrong shape, not base64, a different format). */
export class EnvelopeMalformed extends OperatorError {
  constructor(context: EnvelopeContext, problem: string, cause?: unknown) {
    super(`the ${context.label} is not a signed mesh envelope (${problem})`, {
      next: 'nothing from it was used; the sender is not a mesh controller of a compatible version, or the message was damaged on the way: compare `mesh-control version` with `nox-mesh-host version`',
      cause,
    });
  }
}

/** The envelope names a signer other than the one key this side trusts. */
export class ForeignSigner extends OperatorError {
  /** The signer the envelope names (a public key, safe to show). */
  readonly signer: string;
  /** The pinned key it was expected to name. */
  readonly trusted: string;
  constructor(context: EnvelopeContext, signer: string, trusted: string) {
    super(`the ${context.label} is signed by an untrusted key (only ${trusted} is trusted); its signer`, { value: signer, next: context.whenForeign });
    this.signer = signer;
    this.trusted = trusted;
  }
}

/** The signature does not verify over the payload bytes with the trusted key. */
export class SignatureInvalid extends OperatorError {
  constructor(context: EnvelopeContext, problem: string) {
    super(`the ${context.label}'s signature does not verify with the trusted key (${problem}): it was altered or damaged after signing, or signed by another key`, {
      next: 'nothing from it was used; if this repeats, something between the controller and this machine is altering messages: check the broker host and its TLS certificate',
    });
  }
}

/** The signed bytes are not the canonical JSON of what they decode to. */
export class PayloadNotCanonical extends OperatorError {
  constructor(context: EnvelopeContext, problem: string) {
    super(`the ${context.label}'s signed payload is not canonical JSON (${problem}), so it is refused`, {
      next: 'nothing from it was used; the sender serialised it with a different writer: upgrade whichever of mesh-control and nox-mesh-host is older',
    });
  }
}
