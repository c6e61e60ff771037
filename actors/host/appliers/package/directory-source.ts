import { isAbsolute } from 'node:path';
import type { PackageSource } from './package-source';

/**
 * The repository directory of a `directory` source, checked once when a backend is built:
 * absolute, and free of spaces and quotes, because package managers' configuration formats
 * (an apt sources line, pacman.conf, apk's repository list) split on them.
 */
export function directoryOf(source: PackageSource): string | undefined {
  if (source.kind !== 'directory') return undefined;
  if (!isAbsolute(source.path) || /[\s"'\\]/.test(source.path)) {
    throw new TypeError(`a package repository directory must be an absolute path without spaces or quotes, got ${JSON.stringify(source.path)}`);
  }
  return source.path;
}
