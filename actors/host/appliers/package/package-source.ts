/**
 * Where a backend takes packages from.
 *
 * - `configured`: the repositories the machine (under its root) already has configured — the
 *   real machine's case. The mesh's own repository is reached this way too: a `file` resource
 *   writes the package manager's configuration pointing at it, and the package resource names
 *   the version, so no new shape is needed.
 * - `directory`: only the repository in one local directory, trusted without signatures (the
 *   directory is as trusted as the host that reads it). For tests, and for a mesh that serves
 *   its repository as a directory on the node. Each backend documents the layout it reads:
 *   a flat apt repository (`Packages` beside the `.deb` files), a pacman repository database
 *   named `<repository>.db` beside the package files, or an apk repository with
 *   `<arch>/APKINDEX.tar.gz`. Dependencies must be found there too.
 */
export type PackageSource =
  | { kind: 'configured' }
  | {
      kind: 'directory';
      /** Absolute path of the repository directory. */
      path: string;
      /** The repository's name where the package manager needs one (pacman's `<name>.db`). Default `mesh`. */
      repository?: string;
    };

/** The source a backend uses when none is given: the machine's own configuration. */
export const CONFIGURED_SOURCE: PackageSource = Object.freeze({ kind: 'configured' });
