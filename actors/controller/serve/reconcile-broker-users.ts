import type { BrokerUser } from '../broker/auth-file';

/** What the broker's user list must hold, as mesh.json and the store say. */
export interface BrokerUserFacts {
  /** This controller's nkey and the operator's, from their key files. */
  controllerNkey: string;
  operatorNkey: string;
  /** The cluster's `broker sync` user (cluster.json `sync_nkey`), when the mesh is a cluster. */
  syncNkey?: string | undefined;
  /** Every node that holds an identity (enrolled or disconnected), by name. */
  nodes: ReadonlyArray<{ name: string; nkey: string }>;
  /** Tokens neither used nor expired: only these keep their enrolment user. */
  openTokenIds: ReadonlySet<string>;
}

/**
 * The user list a controller starts from: the controller and operator from mesh.json, each node
 * with the key the store holds for it (a node revoked or released while the controller was down
 * loses its user here), and the enrolment users of the previous list whose tokens are still open
 * (their passwords cannot be made again: the store keeps only a hash of the secret).
 */
export function reconcileBrokerUsers(previous: readonly BrokerUser[], facts: BrokerUserFacts): BrokerUser[] {
  return [
    { role: 'controller', nkey: facts.controllerNkey },
    { role: 'operator', nkey: facts.operatorNkey },
    ...(facts.syncNkey === undefined ? [] : [{ role: 'sync', nkey: facts.syncNkey } as const]),
    ...facts.nodes.map((node): BrokerUser => ({ role: 'node', node: node.name, nkey: node.nkey })),
    ...previous.filter((user) => user.role === 'enrolment' && facts.openTokenIds.has(user.token_id)),
  ];
}
