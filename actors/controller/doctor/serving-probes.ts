import type { ControllerContext } from '../controller-context';
import { brokerProbe } from './broker.probe';
import { brokerCertificateStatus } from '../broker/broker-certificate-status';
import { certificateProbe } from './certificate.probe';
import { declarationStreamProbe } from './declaration-stream.probe';
import { declarationsValidProbe } from './declarations-valid.probe';
import type { DoctorProbe } from './doctor-probe';
import { leaseProbe, type LeaseProbeSources } from './lease.probe';
import { nodeReportsProbe } from './node-reports.probe';
import { storeProbe } from './store.probe';

/** What the serving controller's probes need beyond its context. */
export interface ServingProbeSources {
  lease: Omit<LeaseProbeSources, 'now'>;
  /** The migrations folder the store is checked against; the project's unless given. */
  migrationsDir?: string;
}

/** Every probe, as the serving controller runs them over its own store and connection. */
export function servingProbes(ctx: ControllerContext, sources: ServingProbeSources): DoctorProbe[] {
  const nc = () => Promise.resolve(ctx.nc);
  return [
    storeProbe(ctx.store, sources.migrationsDir),
    brokerProbe(nc, ctx.config.broker.url),
    declarationStreamProbe(nc, ctx.store),
    leaseProbe({ ...sources.lease, now: ctx.now }),
    certificateProbe(ctx.config.broker.cert_file, ctx.now, undefined, () => brokerCertificateStatus(ctx.store, ctx.config.broker.cert_file, ctx.config.broker.dir)),
    nodeReportsProbe(ctx.store, ctx.now),
    declarationsValidProbe({ store: ctx.store, config: ctx.config, signingKey: ctx.signingKey, now: ctx.now, epoch: () => ctx.epoch(), maxPayload: () => ctx.nc.info?.max_payload }),
  ];
}
