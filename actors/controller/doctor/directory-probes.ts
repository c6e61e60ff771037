import { nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import type { ControllerConfig } from '../../../schema/controller-config';
import { connectPinned } from '../../shared/bus';
import { readKeyFile } from '../../shared/crypto';
import { readNkeySeedFile } from '../config/nkey-seed-file';
import { storeLocationOf } from '../serve/store-location-of';
import { readEpochFloor } from '../store/controller-epoch.repo';
import { embeddedStoreDir } from '../store/open-store';
import { PgliteStore } from '../store/pglite-store';
import { PostgresStore } from '../store/postgres-store';
import type { SqlStore } from '../store/sql-store';
import { brokerProbe } from './broker.probe';
import { certificateProbe } from './certificate.probe';
import { declarationStreamProbe } from './declaration-stream.probe';
import { declarationsValidProbe } from './declarations-valid.probe';
import { failed, type DoctorProbe } from './doctor-probe';
import { nodeReportsProbe } from './node-reports.probe';
import { storeProbe } from './store.probe';

/** The probes from the mesh directory alone, and how to close what they opened. */
export interface DirectoryProbes {
  probes: DoctorProbe[];
  /** Closes the store and the broker connection, once whatever opens them has settled. */
  close(): Promise<void>;
}

/**
 * What a doctor can check without a serving controller, from the mesh directory: the store
 * (opened as it is, never migrated), the broker (as the controller's nkey user, so the stream and
 * consumers can be read), the certificate, the nodes' reports and the declarations, and a probe
 * that fails saying no controller answered (`why`), naming `mesh-control serve --dir DIR` (the
 * caller puts the directory in for DIR). The store and the connection are opened by the first
 * probe that needs them, inside its bound, so one that cannot be reached is that probe's
 * `cannot-run`.
 */
export function directoryProbes(meshFile: string, config: ControllerConfig, why: string, now: () => Date = () => new Date()): DirectoryProbes {
  let storeOpening: Promise<SqlStore> | undefined;
  let ncOpening: Promise<NatsConnection> | undefined;
  const openStore = (): Promise<SqlStore> =>
    (storeOpening ??= (async () => {
      const location = storeLocationOf(config, meshFile);
      return location.url !== undefined ? PostgresStore.open(location.url) : PgliteStore.open(embeddedStoreDir(location.dir));
    })());
  const openNc = (): Promise<NatsConnection> =>
    (ncOpening ??= (async () => {
      const user = await readNkeySeedFile(config.controller.nkey_seed_file);
      return connectPinned(config.broker.url, config.broker.fingerprint, { authenticator: nkeyAuthenticator(user.seed), name: 'mesh-control doctor', reconnect: false, timeout: 5000 });
    })());
  // The store as the probes see it, opened on first use.
  const store: SqlStore = {
    kind: config.store.kind === 'postgres' ? 'postgres' : 'pglite',
    query: async (sql, params) => (await openStore()).query(sql, params),
    exec: async (script) => (await openStore()).exec(script),
    transaction: async (fn) => (await openStore()).transaction(fn),
    close: async () => undefined,
  };
  let signingKey: Uint8Array | undefined;
  let epoch = 1;
  let maxPayload: number | undefined;
  const controller: DoctorProbe = {
    name: 'controller',
    whenCannotRun: 'mesh-control serve --dir DIR',
    run: async () => failed(`no serving controller answered (${why}): nothing sends declarations, repairs the bus or holds the lease, and the lease was not probed`, 'start it: mesh-control serve --dir DIR'),
  };
  const validator = declarationsValidProbe({ store, config, get signingKey() { return signingKey as Uint8Array; }, now, epoch: () => epoch, maxPayload: () => maxPayload });
  return {
    probes: [
      controller,
      storeProbe(store),
      brokerProbe(openNc, config.broker.url),
      declarationStreamProbe(openNc, store),
      certificateProbe(config.broker.cert_file, now),
      nodeReportsProbe(store, now),
      {
        ...validator,
        run: async (signal) => {
          // What a controller starting now would send under: the next epoch above the floor.
          signingKey = await readKeyFile(config.controller.signing_key_file, { bytes: 32, whenMissing: 'it is made by mesh-control init; restore it from a backup' });
          epoch = ((await readEpochFloor(store))?.epoch ?? 0) + 1;
          maxPayload = (await openNc().catch(() => undefined))?.info?.max_payload;
          return validator.run(signal);
        },
      },
    ],
    close: async () => {
      const [openedStore, openedNc] = await Promise.allSettled([storeOpening, ncOpening]);
      if (openedNc.status === 'fulfilled') await openedNc.value?.close().catch(() => undefined);
      if (openedStore.status === 'fulfilled') await openedStore.value?.close().catch(() => undefined);
    },
  };
}
