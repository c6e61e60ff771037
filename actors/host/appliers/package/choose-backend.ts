import { OperatorError } from '../../../shared/operator-error';
import { ApkBackend } from './apk.backend';
import { DpkgBackend } from './dpkg.backend';
import type { PackageBackend, PackageBackendOptions } from './package-backend';
import { PacmanBackend } from './pacman.backend';

/** The machine's profile says it has no package manager the host can drive. */
export class NoPackageManager extends OperatorError {
  constructor() {
    super("this machine's profile names no package manager, so the host cannot apply package resources here", {
      value: 'none',
      next: 'leave package resources out of the modules assigned to this node, or install apt, pacman or apk and check with `nox-mesh-host profile` that it is found',
    });
  }
}

/** The profile names a package manager the host does not know how to drive. */
export class UnknownPackageManager extends OperatorError {
  constructor(manager: string) {
    super('the profile names a package manager the host cannot drive (it drives apt, pacman and apk)', {
      value: manager,
      next: 'check `nox-mesh-host profile` on the machine; if it misreads the machine, report it with that output; otherwise leave package resources out of the modules assigned to this node',
    });
  }
}

/**
 * The package backend for a machine, from the package manager its profile names: `apt`
 * (apt-get and dpkg), `pacman` or `apk`. Throws {@link NoPackageManager} for `none` and
 * {@link UnknownPackageManager} for anything else, so a node that cannot hold packages says so
 * once rather than failing every package resource with a confusing error.
 */
export function chooseBackend(manager: string, options: PackageBackendOptions = {}): PackageBackend {
  switch (manager) {
    case 'apt':
      return new DpkgBackend(options);
    case 'pacman':
      return new PacmanBackend(options);
    case 'apk':
      return new ApkBackend(options);
    case 'none':
      throw new NoPackageManager();
    default:
      throw new UnknownPackageManager(manager);
  }
}
