/**
 * The version this process is running. The bundle replaces `MESH_VERSION` at build time; a
 * checkout reads package.json. Reports and heartbeats carry this, the version *running*, never
 * the one a package manager says is installed.
 */
declare const MESH_BUILD_VERSION: string | undefined;

export function runningVersion(): string {
  if (typeof MESH_BUILD_VERSION === 'string') return MESH_BUILD_VERSION;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('../../package.json') as { version: string }).version;
}
