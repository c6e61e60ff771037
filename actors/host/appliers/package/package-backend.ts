import type { ApplyContext } from '../applier';
import type { PackageSource } from './package-source';

/** The package managers the host can drive, as a machine's profile names them. */
export type PackageManagerName = 'apt' | 'pacman' | 'apk';

/**
 * One system package manager as the package applier uses it: read one package's installed
 * version from the package database, and install a version. Everything resolves under
 * `ctx.root` and every program runs through `ctx.runner`.
 */
export interface PackageBackend {
  /** Which package manager this is (kept with an adopted original). */
  readonly manager: PackageManagerName;
  /**
   * The version the package database records as installed, or undefined when the package is
   * not installed. Asked afresh on every call, never remembered: the host's read-back after an
   * install is this call, and it must see what the database says, not what the install said.
   * Throws {@link PackageDatabaseUnreadable} when the database cannot be read at all.
   */
  installed(name: string, ctx: ApplyContext): Promise<string | undefined>;
  /**
   * Installs the package at `version` (any version when undefined), upgrading or downgrading
   * what is there, without asking anything. Returning proves nothing about the machine: the
   * caller reads back with {@link installed}. Throws an `ApplyFailed` (one subclass per
   * condition in package-errors) carrying the package manager's own words. Returns a line for
   * the report when the package came from somewhere a person would not assume (pacman's
   * package cache rather than a repository), undefined otherwise.
   */
  install(name: string, version: string | undefined, ctx: ApplyContext): Promise<string | undefined>;
  /** The package manager and where it takes packages from, for messages: "apt/dpkg (the machine's apt sources)". */
  describe(): string;
}

/** How every backend is set up. */
export interface PackageBackendOptions {
  /** Where packages come from. Default: the machine's configured repositories. */
  source?: PackageSource;
  /**
   * How long one install (or repository refresh) may run before it is stopped. Long by default:
   * stopping a package manager half way leaves its database for a person to repair.
   */
  installTimeoutMs?: number;
}

/** Thirty minutes: a large upgrade over a slow link, not a hung prompt (nothing prompts). */
export const DEFAULT_INSTALL_TIMEOUT_MS = 30 * 60 * 1000;

/** Reading one package's state is quick; a query that takes longer is stuck. */
export const QUERY_TIMEOUT_MS = 60 * 1000;
