/**
 * `node:child_process`, loaded the first time a program is started rather than when the code
 * that may start one is. Node's module brings dgram and its socket lists with it, some 0.3 MB
 * that an enrolled host holding only files and directories would carry for nothing while it
 * idles: its passes start no program.
 */
export function childProcess(): typeof import('node:child_process') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('node:child_process') as typeof import('node:child_process');
}
