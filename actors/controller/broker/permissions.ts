import {
  BROKER_SYNC_INBOX_PREFIX,
  CONTROL_SUBJECTS,
  DECLARATION_STREAM,
  MAPPED_REPLY_PREFIX,
  NODE_JS_API_PREFIX,
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
 * The controller, in the controller's account with JetStream: the mesh's own subjects (its
 * events under `mesh.controller.event.>` among them), the JetStream and KV APIs (streams,
 * consumers, acks, flow control, the lease, calls, conditions and condition-history buckets), its own
 * `_INBOX.` replies, the operator's CLI's `_INBOX_operator.` replies (the CLI is a user of the
 * same account), and `_R_.>`, the replies nats-server maps back to a requester in another
 * account (a node, an enrolling host).
 *
 * It needs no `allow_responses`: every request from outside its account arrives with a `_R_.`
 * reply. (nats-server 2.9 forgets the replies `allow_responses` grants at every reload, and
 * enrolment and `token issue` reload while a requester waits; the mapped replies survive it.)
 */
export function controllerPermissions(): SubjectPermissions {
  const subjects = ['mesh.>', '$JS.>', '$KV.>', '_INBOX.>'];
  return { publish: [...subjects, `${OPERATOR_INBOX_PREFIX}.>`, `${MAPPED_REPLY_PREFIX}>`], subscribe: subjects, allow_responses: false };
}

/**
 * The subjects, in the nodes' account, through which a node drives its own durable consumer:
 * ask for the next messages and read the consumer's info (both under NODE_JS_API_PREFIX, which
 * the nodes' account imports from the controller's), and acknowledge (the v1 form
 * `$JS.ACK.<stream>.<consumer>.…` that nats-server 2.9 sends).
 */
export function nodeConsumerSubjects(node: string): { next: string; info: string; ack: string } {
  const consumer = `${DECLARATION_STREAM}.${declarationConsumer(node)}`;
  return {
    next: `${NODE_JS_API_PREFIX}.CONSUMER.MSG.NEXT.${consumer}`,
    info: `${NODE_JS_API_PREFIX}.CONSUMER.INFO.${consumer}`,
    ack: `$JS.ACK.${consumer}.>`,
  };
}

/**
 * A node, in the nodes' account: publish under its own `mesh.node.<node>.>` and drive its own
 * durable consumer, subscribe only under its own inbox prefix. It cannot create or change a
 * consumer (one filtered to another node's declarations would read them), publish
 * declarations, or see any other node's traffic. Whatever reply subject it sets, the answer
 * stays in the nodes' account (see auth-file.ts).
 */
export function nodePermissions(node: string): SubjectPermissions {
  const consumer = nodeConsumerSubjects(node);
  return {
    publish: [`${nodeSubjectRoot(node)}.>`, consumer.next, consumer.info, consumer.ack],
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

/**
 * `mesh-control broker sync` on a broker machine: read the user-list bucket's stored messages
 * (a KV get of its one key, bound without a look at the stream) and its own answers under its
 * own inbox prefix. It cannot write the bucket, publish on the mesh's subjects or read anyone's
 * replies. `bucketStream` is the bucket's stream (`KV_<bucket>`).
 */
export function syncPermissions(bucketStream: string): SubjectPermissions {
  return {
    publish: [`$JS.API.STREAM.MSG.GET.${bucketStream}`],
    subscribe: [`${BROKER_SYNC_INBOX_PREFIX}.>`],
    allow_responses: false,
  };
}
