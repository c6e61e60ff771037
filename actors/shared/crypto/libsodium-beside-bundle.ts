/**
 * What `libsodium-wrappers` is in the host bundle (scripts/build-host.ts makes the name a module
 * whose exports are `loadLibsodium()`):
 * libsodium is not in the bundle but built as a file of its own, LIBSODIUM_FILE, and loaded from
 * there the first time a sealed box is opened (sodium.ts requires it only then). Its WebAssembly
 * is some 1.5 MB of base64 text: inside the bundle, every start parsed it and every host held it
 * in memory, though a host opens a box only when a secret is sent to it.
 *
 * In the single executable the file is an asset of the executable (node:sea), so the host is
 * still one file; beside the bundle it is a file in the bundle's folder.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import type libsodiumModule from 'libsodium-wrappers';

/** The file's name beside the bundle, and the asset's name in the single executable. */
export const LIBSODIUM_FILE = 'nox-mesh-host-libsodium.cjs';

/** libsodium could not be found where the build put it: a host installed without it. */
export class LibsodiumMissing extends Error {
  constructor(where: string, options?: ErrorOptions) {
    super(`libsodium, which opens sealed secrets, is not at ${where}; next: install the host again from its package or tarball (the executable carries it), or keep ${LIBSODIUM_FILE} beside nox-mesh-host.cjs`, options);
    this.name = 'LibsodiumMissing';
  }
}

interface SeaModule {
  isSea(): boolean;
  getAsset(key: string, encoding: string): string;
}

function seaModule(): SeaModule | undefined {
  try {
    // node:sea is there from Node 20.12; a bundle run by an older Node is not an executable.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('node:sea') as SeaModule;
  } catch {
    return undefined;
  }
}

/** libsodium, from the executable's asset or the file beside the bundle: see above. */
export function loadLibsodium(): typeof libsodiumModule {
  const sea = seaModule();
  if (sea?.isSea() === true) {
    let text: string;
    try {
      text = sea.getAsset(LIBSODIUM_FILE, 'utf8');
    } catch (error) {
      throw new LibsodiumMissing(`the executable's asset ${LIBSODIUM_FILE}`, { cause: error });
    }
    // The executable's own `require` gives Node's built-in modules, all this file asks for.
    const module = { exports: {} as unknown };
    const run = vm.compileFunction(text, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: LIBSODIUM_FILE });
    run.call(module.exports, module.exports, require, module, LIBSODIUM_FILE, '.');
    return module.exports as typeof libsodiumModule;
  }
  // __dirname is the bundle's folder: the bundle is one file.
  const file = path.join(__dirname, LIBSODIUM_FILE);
  if (!existsSync(file)) throw new LibsodiumMissing(file);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(file) as typeof libsodiumModule;
}
