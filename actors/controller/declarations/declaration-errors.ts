import { OperatorError } from '../../shared/operator-error';
import { bytesText } from '../../../schema/bounds';
import type { NodeLifecycleState } from '../store/nodes.repo';

/** A verb that sends a node declarations named a node that holds no identity to send them to. */
export class NodeNotEnrolled extends OperatorError {
  readonly node: string;
  readonly state: NodeLifecycleState;
  constructor(node: string, state: NodeLifecycleState) {
    const next =
      state === 'released'
        ? `the node was released; to bring the machine back, issue a token for it: mesh-control token issue --node ${node}`
        : `its identity was revoked for re-enrolment; enrol the machine with the token issued for it (mesh-control token issue --node ${node}), then try again`;
    super(`node ${node} is ${state}, not enrolled`, { value: node, next });
    this.node = node;
    this.state = state;
  }
}

/** A node whose release is under way is sent nothing but its final declaration. */
export class NodeBeingReleased extends OperatorError {
  readonly node: string;
  constructor(node: string, generation: number) {
    super(`node ${node} is being released (final declaration, generation ${generation}): it takes no other declaration`, {
      value: node,
      next: `wait for its report (mesh-control nodes shows it released), or, to keep it, enrol it again afterwards: mesh-control token issue --node ${node}`,
    });
    this.node = node;
  }
}

/** A declared resource has the key of one the overlay writes, which only the overlay may set. */
export class DeclaredResourceReserved extends OperatorError {
  readonly key: string;
  constructor(key: string) {
    super('a declared resource is one the overlay writes for the node', {
      value: key,
      next: 'leave it out of the declaration: the mesh writes the overlay\'s WireGuard configuration, names file and service itself',
    });
    this.key = key;
  }
}

/** The node has no overlay address or WireGuard key yet, so no overlay can be composed for it. */
export class NodeNotOnOverlay extends OperatorError {
  readonly node: string;
  constructor(node: string) {
    super(`node ${node} has no place on the overlay (no address or WireGuard key)`, {
      value: node,
      next: `enrol the machine first: mesh-control token issue --node ${node}, then nox-mesh-host enrol --token …`,
    });
    this.node = node;
  }
}

/**
 * A declaration whose signed envelope is larger than the broker carries in one message: refused
 * whole before it is recorded or sent, so the node's last declaration stands.
 */
export class DeclarationTooLargeForBroker extends OperatorError {
  constructor(node: string, bytes: number, maxPayload: number) {
    super(`node ${node}'s declaration, signed, is ${bytesText(bytes)}, over the ${bytesText(maxPayload)} the broker carries in one message (its max_payload)`, {
      value: node,
      next: 'declare less on this node (fewer or smaller resources; large content belongs in a package), or raise max_payload in the broker configuration and restart the broker',
    });
  }
}

/**
 * A declaration for a node names shapes its kind of host does not take: an episodic host (a
 * phone) takes files, directories and actions only, and would refuse the whole declaration.
 */
export class ShapeNotTakenByNode extends OperatorError {
  readonly node: string;
  readonly keys: string[];
  constructor(node: string, kind: string, keys: string[], taken: readonly string[], nothingDone: string) {
    const shown = keys.slice(0, 5).join(', ') + (keys.length > 5 ? ` and ${keys.length - 5} more` : '');
    super(`node ${node} is an ${kind} host, which takes only ${taken.join(', ')}: ${shown} would be refused there; ${nothingDone}`, {
      value: node,
      next: `leave those resources out for ${node}, or put them on a resident node (mesh-control nodes shows each node's kind)`,
    });
    this.node = node;
    this.keys = keys;
  }
}
