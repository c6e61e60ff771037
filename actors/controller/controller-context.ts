import type { NatsConnection } from '@nats-io/transport-node';
import type { ControllerConfig } from '../../schema/controller-config';
import type { LogFields } from './logs/log-fields';
import type { SqlStore } from './store/sql-store';

/**
 * Changes to the broker's user list. Every change rewrites the 0600 auth file and reloads the
 * broker, one change at a time (two overlapping reloads could each read the other's
 * confirmation). Removing a user and reloading drops its live connection at once.
 */
export interface BrokerUsers {
  addNode(node: string, nkeyPublic: string): Promise<void>;
  removeNode(node: string): Promise<void>;
  addEnrolment(tokenId: string, password: string): Promise<void>;
  removeEnrolment(tokenId: string): Promise<void>;
}

/** The gate of the lease as the parts see it (actors/controller/lease/lease-gate.ts). */
export interface ActingGate {
  /** True while this controller may act. */
  isActing(): boolean;
  /** Throws NotActing, saying why, unless this controller may act; `what` completes "it did not …". */
  assertActing(what: string): void;
}

/**
 * What every part of the serving controller is given: its configuration, the store, the bus,
 * its signing key, the broker's user list, the epoch it acts under, and its clock. Built once
 * by the composition root (`mesh-control serve`); tests build one over a test broker and store.
 */
export interface ControllerContext {
  /** The mesh directory (`mesh-control init --dir`). */
  dir: string;
  config: ControllerConfig;
  store: SqlStore;
  /** The controller's own connection (its nkey user: mesh.>, $JS.>, $KV.>). */
  nc: NatsConnection;
  /** The controller's Ed25519 signing key (32-byte seed): every declaration is sealed with it. */
  signingKey: Uint8Array;
  broker: BrokerUsers;
  /**
   * The epoch declarations are sent under (fencing: a host refuses a lower one than it has
   * seen): the revision the lease was taken at. Read each time: the lease may move it. Throws
   * NotActing before this controller first held the lease.
   */
  epoch(): number;
  /**
   * The lease's gate, which every send of a declaration and every plan write passes: open only
   * while this controller holds the lease and is short of its deadline (see LeaseGate). Absent
   * only in a context a test builds by hand to drive one part, which then acts as if it held
   * the lease; `mesh-control serve` always sets it.
   */
  lease?: ActingGate;
  now(): Date;
  /** One line for the operator's log (never key material or token secrets), info unless `fields` give a level. */
  log(line: string, fields?: LogFields): void;
}
