import {
  CONTROL_SUBJECTS,
  DECLARATION_STREAM,
  OPERATOR_INBOX_PREFIX,
  declarationConsumer,
  enrolmentInboxPrefix,
  enrolmentSubject,
  nodeInboxPrefix,
  nodeSubjectRoot,
} from '../../shared/bus/subjects';

/**
 * What one broker user may do, as nats-server's `permissions` block: subjects it may publish
 * to and subscribe to (everything else is refused), and whether it may answer requests it
 * receives on their reply subjects.
 */
export interface SubjectPermissions {
  publish: readonly string[];
  subscribe: readonly string[];
  /** Lets the user publish one reply to the reply subject of each message it received. */
  allow_responses: boolean;
}

/**
 * The controller: the mesh's own subjects, the JetStream and KV APIs (streams, consumers,
 * acks, flow control, the lease bucket) and its own `_INBOX.` replies. It answers nodes and
 * enrolling hosts on their private inbox prefixes through `allow_responses`, which is why it
 * needs no publish right on `_INBOX_node_…`: it can reply to what it was asked, not write into
 * a node's inbox unasked.
 *
 * The operator's inbox is the exception. nats-server (2.9) forgets the replies it allows a
 * user when it reloads its users, so an answer sent after a reload is refused as a publish
 * violation; `token issue` reloads the broker while the CLI waits for its answer. The operator
 * is the controller's own CLI, so the controller may publish to its inbox outright.
 */
export function controllerPermissions(): SubjectPermissions {
  const subjects = ['mesh.>', '$JS.>', '$KV.>', '_INBOX.>'];
  return { publish: [...subjects, `${OPERATOR_INBOX_PREFIX}.>`], subscribe: subjects, allow_responses: true };
}

/**
 * A node: publish under its own `mesh.node.<node>.>` and drive its own durable consumer (ask
 * for the next message, read the consumer's info, acknowledge), subscribe only under its own
 * inbox prefix. It cannot create or change a consumer (one filtered to another node's
 * declarations would read them), publish declarations, or see any other node's traffic.
 *
 * Acks are the v1 form `$JS.ACK.<stream>.<consumer>.…` that nats-server 2.9 sends.
 */
export function nodePermissions(node: string): SubjectPermissions {
  const consumer = `${DECLARATION_STREAM}.${declarationConsumer(node)}`;
  return {
    publish: [
      `${nodeSubjectRoot(node)}.>`,
      `$JS.API.CONSUMER.MSG.NEXT.${consumer}`,
      `$JS.API.CONSUMER.INFO.${consumer}`,
      `$JS.ACK.${consumer}.>`,
    ],
    subscribe: [`${nodeInboxPrefix(node)}.>`],
    allow_responses: false,
  };
}

/**
 * A token's one-time enrolment user: send the one request its token allows and read the answer
 * under its own inbox prefix. Nothing else: it cannot see another enrolment, nor any node.
 */
export function enrolmentPermissions(tokenId: string): SubjectPermissions {
  return {
    publish: [enrolmentSubject(tokenId)],
    subscribe: [`${enrolmentInboxPrefix(tokenId)}.>`],
    allow_responses: false,
  };
}

/**
 * The operator's CLI (`mesh-control token issue`, `nodes`, …): ask the serving controller on
 * `mesh.control.>` and read its answers under the operator's own inbox prefix. It cannot reach
 * a node's subjects, the declaration stream or an enrolment, so a leaked operator key lets its
 * holder ask the controller, whose verbs check their arguments, and nothing more.
 */
export function operatorPermissions(): SubjectPermissions {
  return {
    publish: [CONTROL_SUBJECTS],
    subscribe: [`${OPERATOR_INBOX_PREFIX}.>`],
    allow_responses: false,
  };
}
