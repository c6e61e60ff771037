/**
 * The mesh's subject space on the broker. Two trees, one per direction, so that what a node may
 * publish (upward) can never reach what it is sent (downward):
 *
 *   mesh.declaration.<node>        down: the controller's signed declarations, kept in the
 *                                  DECLARATION_STREAM (latest per subject) and read by the node
 *                                  through its own durable consumer
 *   mesh.node.<node>.<kind>        up: reports, heartbeats and requests from that node alone
 *   mesh.enrol.<token id>          up: the one enrolment request a token allows
 *   _INBOX_node_<node>.>           replies to that node, and its JetStream pulls
 *   _INBOX.enrol.<token id>.>      the reply to an enrolment request
 *   mesh.control.<verb>            the operator's CLI asking the serving controller
 *   _INBOX_operator.>              the controller's answers to the CLI
 *
 * Each side sits in its own broker account (see docs/bus-trust.md and auth-file.ts): a node's
 * JetStream requests cross into the controller's account under NODE_JS_API_PREFIX, and every
 * answer to a cross-account request comes back on a `_R_.…` reply the server maps, so no
 * reply subject a sender chooses is ever published to with the controller's rights.
 *
 * A node name is one DNS label and a token id is hex, so neither can contain `.`, `*`, `>` or
 * `_`: a name is always exactly one subject token and no node's inbox prefix can equal or
 * contain another's, nor an enrolment inbox.
 *
 * Both the host and the controller use these names, so they live in actors/shared/.
 */

/** The JetStream stream holding the latest declaration for every node. */
export const DECLARATION_STREAM = 'MESH_DECLARATIONS';

/** The subjects of DECLARATION_STREAM. */
export const DECLARATION_SUBJECTS = 'mesh.declaration.*';

/**
 * The prefix under which a node's connection reaches JetStream (nats.js `apiPrefix`). The nodes'
 * account has no JetStream of its own, and nats-server 2.9 answers every `$JS.API.>` request in
 * such an account itself ("JetStream not enabled"), racing the import; so the controller's
 * account exports the node-facing consumer requests and the nodes' account imports them under
 * this prefix. Acknowledgements (`$JS.ACK.…`) are not API requests and cross unprefixed.
 */
export const NODE_JS_API_PREFIX = 'mesh.js';

/**
 * How long a node's pull for declarations waits on the broker before it is made again, and how
 * long the broker waits for a delivered declaration's acknowledgement before offering it again.
 *
 * nats-server 2.9 keeps a pull that was waiting when its accounts were reloaded (every enrolment
 * and token rewrites them) even after the node that made it is gone, and hands the next
 * declaration to it. Such a declaration comes again once the acknowledgement wait passes; with
 * the pull's life no longer than that wait, every stale pull has expired by then, so a node that
 * restarts gets a declaration sent meanwhile within DECLARATION_ACK_WAIT_MS, not never.
 */
export const DECLARATION_PULL_EXPIRES_MS = 10_000;

/** See DECLARATION_PULL_EXPIRES_MS; it must not be shorter than the pull's life. */
export const DECLARATION_ACK_WAIT_MS = 10_000;

/** DECLARATION_ACK_WAIT_MS as JetStream's consumer settings count it, in nanoseconds. */
export const DECLARATION_ACK_WAIT_NS = DECLARATION_ACK_WAIT_MS * 1_000_000;

/** The subject the controller publishes a node's declarations to. */
export function declarationSubject(node: string): string {
  return `mesh.declaration.${node}`;
}

/** The durable consumer through which a node reads its declarations (filtered to its subject). */
export function declarationConsumer(node: string): string {
  return `node-${node}`;
}

/** Everything a node sends starts with this; it may publish under it and nowhere else. */
export function nodeSubjectRoot(node: string): string {
  return `mesh.node.${node}`;
}

/** The subject of a node's apply reports. */
export function reportSubject(node: string): string {
  return `${nodeSubjectRoot(node)}.report`;
}

/** The subject of a node's heartbeats. */
export function heartbeatSubject(node: string): string {
  return `${nodeSubjectRoot(node)}.heartbeat`;
}

/**
 * The inbox prefix a node's connection must use (nats.js `inboxPrefix`): the broker lets it
 * subscribe under this prefix only, so its replies and pulled messages are its own.
 */
export function nodeInboxPrefix(node: string): string {
  return `_INBOX_node_${node}`;
}

/** The one subject an enrolment user may publish to: its request to join. */
export function enrolmentSubject(tokenId: string): string {
  return `mesh.enrol.${tokenId}`;
}

/**
 * The inbox prefix of an enrolment connection, where the controller's answer arrives (mapped
 * back from the controller's account by the broker, into the enrolment account).
 */
export function enrolmentInboxPrefix(tokenId: string): string {
  return `_INBOX.enrol.${tokenId}`;
}

/** The broker user name of a token's one-time enrolment user. */
export function enrolmentUserName(tokenId: string): string {
  return `enrol-${tokenId}`;
}

/** The subject a CLI verb is sent to; the serving controller answers it. */
export function controlSubject(verb: string): string {
  return `mesh.control.${verb}`;
}

/**
 * The start of every reply subject nats-server gives a request that crossed from another account
 * through a service import; the server maps the answer back to the requester's own reply.
 */
export const MAPPED_REPLY_PREFIX = '_R_.';

/** Every control subject, for the controller's subscription and the operator's permission. */
export const CONTROL_SUBJECTS = 'mesh.control.>';

/** The inbox prefix of the operator's CLI connection. */
export const OPERATOR_INBOX_PREFIX = '_INBOX_operator';

/** Where the answers to `mesh-control broker sync` (a MESH user of its own) arrive: only it reads them. */
export const BROKER_SYNC_INBOX_PREFIX = '_INBOX_brokersync';
