import { join, resolve } from 'node:path';
import { mkdir, writeFile } from '../../../shared/fs/promised-fs';
import type { ApplyContext } from '../applier';
import { succeeded, type RunResult } from '../../../shared/process/command-runner';
import { directoryOf } from './directory-source';
import { lastWords } from './last-words';
import { isMachineRoot } from './machine-root';
import { outputOf } from './output-of';
import { findCachedPackage, pacmanCacheDirectories } from './pacman-cache';
import { DEFAULT_INSTALL_TIMEOUT_MS, QUERY_TIMEOUT_MS, type PackageBackend, type PackageBackendOptions } from './package-backend';
import { PackageDatabaseUnreadable, type PackageChangeFailed } from './package-errors';
import { packageFailures } from './package-failures';
import { CONFIGURED_SOURCE, type PackageSource } from './package-source';
import { packageTarget } from './package-target';

const NOT_FOUND = /target not found/;
const LOCKED = /unable to lock database|could not lock database/;
// pacman's messages are translated, and the classification above reads English.
const ENVIRONMENT = { LC_ALL: 'C' };

/**
 * Arch Linux and its derivatives: `pacman --sync --needed name=version` installs from the
 * repositories in pacman.conf, `pacman --query name` reads back from the local database.
 *
 * Under another root every path pacman uses is pointed into it (`--root`, `--dbpath`,
 * `--cachedir`, `--logfile`, `--gpgdir`, `--hookdir`, and the root's own pacman.conf), because
 * `--root` alone no longer moves the database.
 *
 * A sync repository lists one version of each package, so a pinned version installs from the
 * repositories only while they hold that version. When a target is not found the sync
 * databases are downloaded afresh once and the install tried again, the way a just-published
 * version becomes visible. Refreshing without upgrading the rest of the system is what Arch
 * calls a partial upgrade; it is confined to the case where the declared package cannot be
 * found otherwise.
 *
 * A pinned version the repositories still do not offer (older than theirs: a downgrade, or one
 * they have dropped) is then taken from the machine's package cache, the way an Arch operator
 * downgrades by hand: `pacman --upgrade` of `<name>-<version>-<arch>.pkg.tar.*` found in the
 * CacheDir directories of the root's pacman.conf or the default (see {@link findCachedPackage}).
 * Signatures are checked as the pacman.conf pacman runs with says (its LocalFileSigLevel);
 * nothing here relaxes them. With a `directory` source that is the host's own pacman.conf,
 * which sets no level: pacman's default checks a signature lying beside the file. Without such a
 * file the install fails as not in the repository, naming the directories searched.
 *
 * With a `directory` source pacman uses a pacman.conf in the host's state directory naming only
 * the repository `<repository>.db` in that directory, unsigned.
 */
export class PacmanBackend implements PackageBackend {
  readonly manager = 'pacman' as const;
  private readonly directory: string | undefined;
  private readonly repository: string;
  private readonly installTimeoutMs: number;

  constructor(options: PackageBackendOptions = {}) {
    const source: PackageSource = options.source ?? CONFIGURED_SOURCE;
    this.directory = directoryOf(source);
    this.repository = (source.kind === 'directory' ? source.repository : undefined) ?? 'mesh';
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(this.repository)) {
      throw new TypeError(`a pacman repository name is letters, digits and "._-", got ${JSON.stringify(this.repository)}`);
    }
    this.installTimeoutMs = options.installTimeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS;
  }

  describe(): string {
    return this.directory === undefined
      ? "pacman (the machine's pacman.conf repositories)"
      : `pacman (the repository ${this.repository} in ${this.directory})`;
  }

  async installed(name: string, ctx: ApplyContext): Promise<string | undefined> {
    const root = resolve(ctx.root);
    // A query needs no repositories, so under a root it reads no pacman.conf at all: nothing a
    // declaration is rewriting at the same moment can disturb the read-back.
    const options = isMachineRoot(root) ? [] : [...pathsUnder(root), '--config', '/dev/null'];
    const result = await ctx.runner.run(['pacman', ...options, '--query', name], { env: ENVIRONMENT, timeoutMs: QUERY_TIMEOUT_MS, signal: ctx.signal });
    // A query ended by leaving the apply is not an unreadable database.
    ctx.signal?.throwIfAborted();
    if (result.code === 1 && /error: package '[^']*' was not found/.test(result.stderr)) return undefined;
    if (!succeeded(result)) throw new PackageDatabaseUnreadable(`pacman could not read the package database: ${lastWords(result)}`);
    // "name version"; a name that is provided by another package answers with that one's name.
    const [found, version] = result.stdout.trim().split('\n')[0]?.split(' ') ?? [];
    return found === name && version !== undefined && version !== '' ? version : undefined;
  }

  async install(name: string, version: string | undefined, ctx: ApplyContext): Promise<string | undefined> {
    return this.installNoting(name, version, ctx);
  }

  /**
   * Installs as {@link install} does and returns a line for the report when the package came
   * from somewhere a person would not assume: the package cache rather than a repository.
   * Undefined for an ordinary install from the repositories.
   */
  async installNoting(name: string, version: string | undefined, ctx: ApplyContext): Promise<string | undefined> {
    // Checked between steps but not handed to pacman: one stopped half way leaves its lock
    // and a half-written system behind.
    ctx.signal?.throwIfAborted();
    const options = await this.prepare(ctx);
    const target = packageTarget(name, version);
    const sync = ['pacman', ...options, '--noconfirm', '--noprogressbar', '--needed', '--sync'];
    const run = (argv: readonly string[]): Promise<RunResult> => ctx.runner.run(argv, { env: ENVIRONMENT, timeoutMs: this.installTimeoutMs });

    let result = await run([...sync, target]);
    if (succeeded(result)) return undefined;
    if (!NOT_FOUND.test(result.stderr)) throw this.failure(name, version, result, ctx);
    ctx.signal?.throwIfAborted();
    // Twice: download every sync database even when its timestamp says it is current, since
    // a repository rewritten within the same second as the last download looks unchanged.
    result = await run([...sync, '--refresh', '--refresh', target]);
    if (succeeded(result)) return undefined;
    if (!NOT_FOUND.test(result.stderr) || version === undefined) throw this.failure(name, version, result, ctx);

    // Only a pinned version: which cached version "any version" would mean is not the host's to pick.
    const cacheDirectories = await pacmanCacheDirectories(resolve(ctx.root));
    const file = await findCachedPackage(name, version, cacheDirectories);
    if (file === undefined) throw this.failure(name, version, result, ctx, { cacheDirectories });
    ctx.signal?.throwIfAborted();
    result = await run(['pacman', ...options, '--noconfirm', '--noprogressbar', '--needed', '--upgrade', file]);
    if (!succeeded(result)) throw this.failure(name, version, result, ctx, { file });
    return `installed ${name} ${version} from the package cache (${file}): no repository offers that version`;
  }

  /** The options that point an install at the root and the source, creating what a fresh root lacks. */
  private async prepare(ctx: ApplyContext): Promise<string[]> {
    const root = resolve(ctx.root);
    const options: string[] = [];
    if (!isMachineRoot(root)) {
      await mkdir(join(root, 'var/cache/pacman/pkg'), { recursive: true });
      await mkdir(join(root, 'var/log'), { recursive: true });
      options.push(...pathsUnder(root));
      if (this.directory === undefined) options.push('--config', join(root, 'etc/pacman.conf'));
    }
    if (this.directory !== undefined) {
      const work = join(ctx.stateDir, 'packages', 'pacman');
      await mkdir(work, { recursive: true });
      const config = join(work, 'pacman.conf');
      await writeFile(config, ['[options]', 'Architecture = auto', '', `[${this.repository}]`, 'SigLevel = Never', `Server = file://${this.directory}`, ''].join('\n'));
      options.push('--config', config);
    }
    return options;
  }

  /**
   * The failure `result` shows. `cacheDirectories` are where a missing pinned version was looked
   * for; `file` is the cached package pacman was installing when it failed.
   */
  private failure(
    name: string,
    version: string | undefined,
    result: RunResult,
    ctx: ApplyContext,
    cache: { cacheDirectories?: readonly string[]; file?: string } = {},
  ): PackageChangeFailed {
    const root = resolve(ctx.root);
    const text = outputOf(result);
    const failures = packageFailures({ name, version, result, program: 'pacman', source: this.describe() });
    if (LOCKED.test(text)) {
      const lock = join(root, 'var/lib/pacman/db.lck');
      return failures.locked(
        join(root, 'var/lib/pacman'),
        `another pacman is working on this machine and the host tries again at its next apply; if none is running (pacman was killed), remove ${lock}`,
      );
    }
    if (cache.file === undefined && NOT_FOUND.test(text)) {
      return failures.notInRepository(this.whereToPublish(name, version, root, cache.cacheDirectories));
    }
    return failures.runByHand(cache.file === undefined ? `pacman -S --needed ${packageTarget(name, version)}` : `pacman -U ${cache.file}`);
  }

  /**
   * The next step for a package no repository offers: where to make it available. A pinned
   * version was also looked for in `cacheDirectories`, and a file put there is installed too.
   */
  private whereToPublish(name: string, version: string | undefined, root: string, cacheDirectories: readonly string[] | undefined): string {
    if (version === undefined || cacheDirectories === undefined) {
      const where =
        this.directory === undefined
          ? `make sure a repository in ${join(root, 'etc/pacman.conf')} has it; "pacman -Si ${name}" shows the version the machine can see`
          : `publish it into ${this.directory} and add it to ${this.repository}.db (repo-add)`;
      return `check the package name and version in the declaration, or ${where}`;
    }
    const repository =
      this.directory === undefined
        ? `add a repository offering that version to ${join(root, 'etc/pacman.conf')} ("pacman -Si ${name}" shows the version the machine can see now)`
        : `publish it into ${this.directory} and add it to ${this.repository}.db (repo-add)`;
    return (
      `check the package name and version in the declaration. No repository offers it and the package cache has no ` +
      `${name}-${version}-<arch>.pkg.tar.* file (looked in ${cacheDirectories.join(', ')}): ` +
      `put that package file in one of those directories, or ${repository}, and the next apply installs it`
    );
  }
}

/** Every path pacman uses, inside `root`: `--root` alone no longer moves the database. */
function pathsUnder(root: string): string[] {
  return [
    '--root', root,
    '--dbpath', join(root, 'var/lib/pacman'),
    '--cachedir', join(root, 'var/cache/pacman/pkg'),
    '--logfile', join(root, 'var/log/pacman.log'),
    '--gpgdir', join(root, 'etc/pacman.d/gnupg'),
    '--hookdir', join(root, 'etc/pacman.d/hooks'),
  ];
}
