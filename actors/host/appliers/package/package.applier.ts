import { join } from 'node:path';
import { mkdir, writeFile } from '../../../shared/fs/promised-fs';
import type { PackageResource } from '../../../../schema/resource';
import type { Applier, ApplyContext, ApplyOutcome, Observation, Removal } from '../applier';
import type { PackageBackend, PackageManagerName } from './package-backend';
import { PackageDatabaseUnreadable } from './package-errors';
import { HOST_PACKAGE, upgradeHost, type SelfUpgradeOptions } from './self-upgrade';

/** What `keepOriginal` writes: the version that was installed before the host took the package over. */
export interface KeptPackage {
  shape: 'package';
  name: string;
  version: string;
  package_manager: PackageManagerName;
}

/**
 * The applier for `package` resources, over one system package manager.
 *
 * A package is present when the package database says it is installed; a version-less resource
 * is satisfied by any installed version. Applying installs, upgrades or downgrades through the
 * package manager; the host then observes again, which asks the database afresh, so an
 * install that "succeeded" without installing anything is caught by the read-back.
 *
 * An undeclared package is forgotten, never uninstalled: the host only configured it, and
 * uninstalling (say) the container runtime because a declaration changed would stop every
 * container on the node.
 *
 * The host's own package is applied by {@link upgradeHost}: the new binary must run before the
 * host commits to restarting onto it. `selfUpgrade` says where that binary is (tests).
 */
export function packageApplier(backend: PackageBackend, selfUpgrade: SelfUpgradeOptions = {}): Applier<PackageResource> {
  return {
    shape: 'package',

    async observe(resource: PackageResource, ctx: ApplyContext): Promise<Observation> {
      let installed: string | undefined;
      try {
        installed = await backend.installed(resource.name, ctx);
      } catch (error) {
        if (!(error instanceof PackageDatabaseUnreadable)) throw error;
        // Unknown is not a match: a difference keeps the host from recording it as held.
        return { present: false, differences: [`cannot read the package database: ${error.message}`], unreadable: error.message };
      }
      if (installed === undefined) return { present: false, differences: ['not installed'] };
      if (resource.version !== undefined && installed !== resource.version) {
        return { present: true, differences: [`version ${installed} installed, declared ${resource.version}`] };
      }
      return { present: true, differences: [] };
    },

    async apply(resource: PackageResource, ctx: ApplyContext): Promise<ApplyOutcome> {
      if (resource.name === HOST_PACKAGE) return upgradeHost(backend, resource, ctx, selfUpgrade);
      const note = await backend.install(resource.name, resource.version, ctx);
      return note === undefined ? {} : { output: note };
    },

    async remove(_key: string, _ctx: ApplyContext): Promise<Removal> {
      return 'forgotten';
    },

    async keepOriginal(resource: PackageResource, ctx: ApplyContext, dir: string): Promise<string | undefined> {
      const version = await backend.installed(resource.name, ctx);
      if (version === undefined) return undefined;
      const kept: KeptPackage = { shape: 'package', name: resource.name, version, package_manager: backend.manager };
      await mkdir(dir, { recursive: true });
      const path = join(dir, `package-${resource.name}.json`);
      await writeFile(path, `${JSON.stringify(kept, null, 2)}\n`);
      return path;
    },
  };
}
