import type libsodiumModule from 'libsodium-wrappers';

/** The initialised libsodium module (the non-sumo build: what the host bundle carries). */
export type Sodium = typeof libsodiumModule;

let initialised = false;
let libsodium: Sodium | undefined;

/**
 * Waits until libsodium's WebAssembly is loaded. Only sealed boxes (seal.ts) use libsodium, and
 * they run synchronously after this and fail loudly if it was skipped; keys and signatures are
 * Node's own (ed25519.ts, x25519.ts) and need nothing loaded.
 *
 * The module itself is loaded here, not when this file is: its WebAssembly makes a process some
 * 10 MB larger, and no host or controller process calls this. In the host bundle the name is a
 * loader that reads libsodium from a file beside the bundle, or from the single executable's
 * asset (libsodium-beside-bundle.ts): not even its text is in the host until a box is opened.
 */
export async function ready(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  libsodium ??= require('libsodium-wrappers') as Sodium;
  await libsodium.ready;
  initialised = true;
}

/** True once `ready()` has resolved in this process. */
export function isReady(): boolean {
  return initialised;
}

/**
 * The libsodium module, after `ready()`. The module object is returned as is, not copied:
 * libsodium attaches its functions to it only when loading finishes.
 */
export function sodium(): Sodium {
  if (!initialised || libsodium === undefined) throw new SodiumNotReady();
  return libsodium;
}

/**
 * libsodium was used before it was loaded. A wiring bug in the process, not an operator's
 * mistake: the composition root must `await ready()` before starting its actors.
 */
export class SodiumNotReady extends Error {
  constructor() {
    super('libsodium is not loaded yet: call `await ready()` (actors/shared/crypto) once at start-up, before any signing, verifying or sealing');
    this.name = 'SodiumNotReady';
  }
}
