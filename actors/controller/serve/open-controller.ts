import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { BrokerUnreachable, connectPinnedAny } from '../../shared/bus';
import { publicKeyOf, readKeyFile } from '../../shared/crypto';
import { MeshConfigInvalid } from '../config/config-errors';
import { brokerUrlsOf } from '../config/broker-urls';
import { loadControllerConfig } from '../config/load-controller-config';
import { meshDirLayout } from '../config/mesh-dir-layout';
import { brokerCertificatesOnDisk } from '../broker/broker-certificates';
import { readClusterManifest } from '../broker/broker-cluster';
import { openBrokerUsersBucket } from '../broker/broker-users-bucket';
import { BrokerUsersPublisher } from '../broker/broker-users-publisher';
import { readNkeySeedFile } from '../config/nkey-seed-file';
import type { ControllerContext } from '../controller-context';
import type { ControllerLog } from '../logs/log-fields';
import type { LeaseIdentity } from '../lease/kv-lease';
import { LeaseGate } from '../lease/lease-gate';
import { openStore } from '../store/open-store';
import type { SqlStore } from '../store/sql-store';
import { ensureDeclarationStream } from './ensure-declaration-stream';
import { FileBrokerUsers } from './file-broker-users';
import { LeasedBrokerUsers } from './leased-broker-users';
import { BrokerUnreachableAtStart } from './serve-errors';
import { stderrLog } from './stderr-log';
import { storeLocationOf } from './store-location-of';

/** How long closing waits for the bus connection to drain before closing it outright. */
const DRAIN_TIMEOUT_MS = 5000;

/** Options of {@link openController}; the defaults are what `mesh-control serve` uses. */
export interface OpenControllerOptions {
  /** One line per event; standard error with a timestamp unless given. */
  log?: ControllerLog;
  /** The controller's clock; the system clock unless given. */
  now?: () => Date;
  /** Makes the broker read its user list again; SIGHUP to the pid in its pid file unless given. */
  reloadBroker?: () => Promise<void>;
  /**
   * The broker address to dial instead of mesh.json's (the same broker: its certificate is
   * still pinned by mesh.json's fingerprint), e.g. through a proxy in a test.
   */
  brokerUrl?: string;
  /** The monotonic clock the lease's gate reads, in ms; performance.now unless given. */
  monotonicNow?: () => number;
}

/** An open controller: its context, and how to close what it opened. */
export interface OpenedController {
  ctx: ControllerContext;
  /** The lease's gate the context acts through; closed until the lease is taken (serveController). */
  gate: LeaseGate;
  /** This process as the lease and the calls name it. */
  identity: LeaseIdentity;
  /** The broker's user list, opened when the controller starts acting. */
  brokerUsers: LeasedBrokerUsers;
  /** Drains the bus connection and closes the store. Calling it again does nothing. */
  close(): Promise<void>;
}

/**
 * Opens everything a controller acts through, for the mesh in `dir`: reads mesh.json and the
 * keys (the signing key must be the one mesh.json names), opens the store (migrations applied),
 * connects to the broker as the controller's nkey user with the broker certificate pinned by
 * the fingerprint mesh.json holds (reconnecting for as long as the process runs), and makes
 * sure the declaration stream exists. Whatever was opened is closed again when a step fails.
 *
 * It does not act: the lease's gate starts closed and the broker's user list unopened, so
 * nothing is sent and no broker user changed until `serveController` has taken the lease.
 * This is the context `serveController` runs its parts in; tests open one to drive parts
 * directly.
 */
export async function openController(dir: string, options: OpenControllerOptions = {}): Promise<OpenedController> {
  const log = options.log ?? stderrLog;
  const now = options.now ?? (() => new Date());
  const layout = meshDirLayout(dir);
  const config = await loadControllerConfig(layout.dir);
  const signingKey = await readKeyFile(config.controller.signing_key_file, { bytes: 32, whenMissing: 'it is made by mesh-control init; restore it from a backup' });
  if (publicKeyOf(signingKey) !== config.controller.public_key) {
    throw new MeshConfigInvalid(layout.meshFile, `the signing key in ${config.controller.signing_key_file} is not the one controller.public_key names, which every node trusts`);
  }
  const controllerUser = await readNkeySeedFile(config.controller.nkey_seed_file);
  const operatorUser = await readNkeySeedFile(config.operator.nkey_seed_file);

  const store: SqlStore = await openStore(storeLocationOf(config, layout.meshFile));
  let nc: NatsConnection | undefined;
  try {
    // On a cluster every server is tried at start and the client moves between them after.
    const urls = options.brokerUrl !== undefined ? [options.brokerUrl] : brokerUrlsOf(config);
    nc = await connectPinnedAny(urls, config.broker.fingerprint, {
      authenticator: nkeyAuthenticator(controllerUser.seed),
      name: `mesh-control serve (${os.hostname()})`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      timeout: 5000,
    }, { alsoTrusted: () => brokerCertificatesOnDisk(config.broker.cert_file, config.broker.dir) }).catch((error: unknown) => {
      throw error instanceof BrokerUnreachable ? new BrokerUnreachableAtStart(error.url, error.reason, layout.dir, error) : error;
    });
    const stream = await ensureDeclarationStream(nc, config.broker.replicas ?? 1);
    if (stream !== 'present') log(`broker: declaration stream ${stream}`, { stream });
    // On a cluster the list also goes to the bucket every server's `broker sync` applies: the
    // servers on other machines read their own auth.conf (docs/cluster.md).
    const connected = nc;
    const syncNkey = (await readClusterManifest(config.broker.dir))?.sync_nkey;
    const publisher = syncNkey === undefined
      ? undefined
      : new BrokerUsersPublisher(async () => (await openBrokerUsersBucket(connected, config.broker.replicas ?? 1)).kv, log);
    const brokerUsers = new LeasedBrokerUsers(() =>
      FileBrokerUsers.open(store, now(), {
        brokerDir: config.broker.dir,
        controllerNkey: controllerUser.nkey,
        operatorNkey: operatorUser.nkey,
        ...(syncNkey === undefined ? {} : { syncNkey }),
        ...(publisher === undefined ? {} : { publish: (users) => publisher.offer(users) }),
        ...(options.reloadBroker === undefined ? {} : { reload: options.reloadBroker }),
        log,
      }));
    const gate = new LeaseGate(options.monotonicNow);
    const connection = nc;
    const ctx: ControllerContext = {
      dir: layout.dir,
      config,
      store,
      nc: connection,
      signingKey,
      broker: brokerUsers,
      epoch: () => gate.epoch(),
      lease: gate,
      now,
      log,
    };
    const identity: LeaseIdentity = { controller: `${os.hostname()}:${process.pid}`, instance: randomBytes(8).toString('hex') };
    let closing: Promise<void> | undefined;
    return {
      ctx,
      gate,
      identity,
      brokerUsers,
      close: () =>
        (closing ??= (async () => {
          publisher?.stop();
          // Draining waits for the broker; one that is gone gets a bounded wait, then a close.
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<void>((resolve) => {
            timer = setTimeout(resolve, DRAIN_TIMEOUT_MS);
          });
          await Promise.race([connection.drain().catch(() => undefined), late]);
          clearTimeout(timer);
          if (!connection.isClosed()) await connection.close().catch(() => undefined);
          await store.close();
        })()),
    };
  } catch (error) {
    await nc?.close().catch(() => undefined);
    await store.close();
    throw error;
  }
}
