import { OperatorError } from '../../shared/operator-error';

/** A command named a node the store has no record of. */
export class NodeNotFound extends OperatorError {
  readonly node: string;
  constructor(node: string, next = 'list the nodes with `mesh-control nodes`; for a machine the mesh has not seen, issue the token with `mesh-control token issue --new`') {
    super('there is no node with this name', { value: node, next });
    this.node = node;
  }
}
