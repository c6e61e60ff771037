import { OperatorError } from '../../shared/operator-error';

// Errors about provisions name provisions, modules and machines, never a credential's value.

/** An assignment whose consumer has no provider of what it consumes on the mesh. */
export class ProvisionUnprovided extends OperatorError {
  readonly provision: string;
  constructor(node: string, module: string, provision: string, offeredBy: readonly string[], refused: string) {
    const what = offeredBy.length === 0 ? 'no registered module offers it' : `module${offeredBy.length === 1 ? '' : 's'} ${offeredBy.join(', ')} offer${offeredBy.length === 1 ? 's' : ''} it`;
    super(`module ${module} on node ${node} consumes the provision ${provision}, and no node of the mesh provides it (${what}); ${refused}`, {
      next: offeredBy.length === 0
        ? `register a module that lists {"provision": "${provision}", …} under "provides" (mesh-control module add PATH), assign it to a node, then assign ${module} again`
        : `assign the provider first (mesh-control assign NODE ${offeredBy[0]}), then assign ${module} again`,
    });
    this.provision = provision;
  }
}

/** `rotate` named a provision, consumer or module that holds no credential. */
export class NothingToRotate extends OperatorError {
  constructor(provision: string, narrow: { node?: string | undefined; module?: string | undefined }, issued: readonly string[]) {
    const scope = [narrow.node === undefined ? '' : ` on node ${narrow.node}`, narrow.module === undefined ? '' : ` of module ${narrow.module}`].join('');
    super(`no credential of the provision ${provision} is issued${scope}; nothing was rotated`, {
      next: issued.length === 0 ? 'list what is issued with: mesh-control provisions' : `issued now: ${issued.join(', ')} (mesh-control provisions)`,
    });
  }
}

/** The last provider of a provision is being taken off while consumers still hold credentials of it. */
export class ProviderStillNeeded extends OperatorError {
  constructor(node: string, module: string, provision: string, consumers: readonly string[]) {
    super(`module ${module} on node ${node} is the last provider of ${provision}, and ${consumers.join(', ')} still consume${consumers.length === 1 ? 's' : ''} it; nothing was unassigned`, {
      next: `unassign the consumers first (mesh-control unassign NODE MODULE), or assign another provider of ${provision} before taking this one off`,
    });
  }
}

/** A provider's list of accepted credentials would not fit one sealed file. */
export class AcceptedListTooLarge extends OperatorError {
  constructor(node: string, module: string, provision: string, consumers: number) {
    super(`the ${consumers} credentials module ${module} on node ${node} must accept for ${provision} do not fit one sealed file; nothing was sent`, {
      next: `split the consumers between two providers of ${provision} (another node running ${module})`,
    });
  }
}

/** A credential file would land on a path something else on the node declares. */
export class CredentialPathTaken extends OperatorError {
  constructor(node: string, path: string, credentialOf: string, other: string) {
    super(`on node ${node}, ${credentialOf} would write its credential file ${path}, which ${other} declares too; nothing was assigned`, {
      next: 'give the provision\'s "path" in that module.json another file, register the new revision (mesh-control module add PATH), and assign again',
    });
  }
}
