import { runningVersion } from '../../shared/version';

declare const MESH_BUILD_PACKAGE_VERSION: string | undefined;

/**
 * The version this process is running, in the form the system's package manager gives the
 * package it came in: `0.1.0-1` on Debian and Arch, `0.1.0-r0` on Alpine. It is what the
 * launcher hands the package manager to roll back to, so it has to be the package's version,
 * not the program's. `npm run build:host` defines it per system; a checkout, which came in no
 * package, answers the program's version.
 */
export function runningPackageVersion(): string {
  if (typeof MESH_BUILD_PACKAGE_VERSION === 'string') return MESH_BUILD_PACKAGE_VERSION;
  return runningVersion();
}
