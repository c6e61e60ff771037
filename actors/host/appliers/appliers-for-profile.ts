import type { Profile } from '../../../schema/profile';
import { SHAPES_FOR_HOST_KIND } from '../../../schema/resource';
import type { ApplierSet } from '../reconcile/applier-set';
import { actionApplier } from './action.applier';
import { containerApplier } from './container/container.applier';
import { dockerBackend } from './container/docker.backend';
import { podmanBackend } from './container/podman.backend';
import { directoryApplier } from './directory.applier';
import { fileApplier } from './file.applier';
import { chooseBackend } from './package/choose-backend';
import type { PackageSource } from './package/package-source';
import { packageApplier } from './package/package.applier';
import { openrcBackend } from './service/openrc.backend';
import { serviceApplier } from './service/service.applier';
import { startStopDaemonBackend } from './service/start-stop-daemon.backend';
import { systemdBackend } from './service/systemd.backend';

/** Choices the profile does not make. */
export interface ApplierOptions {
  /** Where packages come from (default: the repositories the machine is configured with). */
  packageSource?: PackageSource;
}

/**
 * The appliers this machine takes, chosen from its profile: the package manager it has, the
 * init that runs its services (start-stop-daemon where no init is booted), the container
 * runtime it has. A shape with nothing to apply it (no container runtime) is left out, so a
 * declaration naming it is refused with the reason rather than failing half way. An episodic
 * host takes files, directories and actions only.
 */
export function appliersForProfile(profile: Profile, options: ApplierOptions = {}): ApplierSet {
  const set: ApplierSet = { file: fileApplier, directory: directoryApplier, action: actionApplier };
  if (profile.package_manager !== 'none') {
    set.package = packageApplier(chooseBackend(profile.package_manager, options.packageSource ? { source: options.packageSource } : {}));
  }
  set.service = serviceApplier(
    profile.init === 'systemd' ? systemdBackend() : profile.init === 'openrc' ? openrcBackend() : startStopDaemonBackend(),
  );
  if (profile.container_runtime === 'docker') set.container = containerApplier(dockerBackend());
  if (profile.container_runtime === 'podman') set.container = containerApplier(podmanBackend());
  const allowed = new Set<string>(SHAPES_FOR_HOST_KIND[profile.host_kind]);
  for (const shape of Object.keys(set) as Array<keyof ApplierSet>) if (!allowed.has(shape)) delete set[shape];
  return set;
}
