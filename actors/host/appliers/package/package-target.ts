/**
 * How apt-get, pacman and apk all name a package on their command lines: `name=version` for a
 * pinned version, the bare name for any version.
 */
export function packageTarget(name: string, version: string | undefined): string {
  return version === undefined ? name : `${name}=${version}`;
}
