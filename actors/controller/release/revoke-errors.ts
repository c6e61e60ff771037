import { OperatorError } from '../../shared/operator-error';

/** `node revoke` named a node that holds no identity to revoke: revoked already, or released. */
export class NodeNotRevocable extends OperatorError {
  readonly node: string;
  readonly state: string;
  constructor(node: string, state: string, since: Date | null) {
    const next =
      state === 'revoked'
        ? `nothing more to revoke: its broker user is gone. To bring the machine back, issue a token and enrol it (mesh-control token issue --node ${node}); to retire the record, mesh-control node release ${node}`
        : `a released node holds no identity. To bring the machine back, issue a token for it: mesh-control token issue --node ${node}`;
    super(`node ${node} is ${state} already${since === null ? '' : ` (since ${since.toISOString()})`}`, { value: node, next });
    this.node = node;
    this.state = state;
  }
}

/** `--why` is not a short line of text. */
export class RevocationReasonInvalid extends OperatorError {
  constructor(given: string) {
    super('--why must be one line of at most 500 characters', {
      value: given,
      next: 'say in a line why the node is revoked, e.g. --why "laptop stolen 2026-12-03"',
    });
  }
}
