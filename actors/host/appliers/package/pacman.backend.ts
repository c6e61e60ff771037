import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ApplyContext } from '../applier';
import { succeeded, type RunResult } from '../../../shared/process/command-runner';
import { directoryOf } from './directory-source';
import { lastWords } from './last-words';
import { isMachineRoot } from './machine-root';
import { DEFAULT_INSTALL_TIMEOUT_MS, QUERY_TIMEOUT_MS, type PackageBackend, type PackageBackendOptions } from './package-backend';
import {
  PackageDatabaseLocked,
  PackageDatabaseUnreadable,
  PackageInstallFailed,
  PackageNotInRepository,
  type PackageChangeFailed,
} from './package-errors';
import { CONFIGURED_SOURCE, type PackageSource } from './package-source';

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
 * A sync repository lists one version of each package, so a pinned version installs only
 * while the repository holds that version; otherwise it fails as not in the repository. When a
 * target is not found the sync databases are downloaded afresh once and the install
 * tried again, the way a just-published version becomes visible. Refreshing without upgrading
 * the rest of the system is what Arch calls a partial upgrade; it is confined to the case
 * where the declared package cannot be found otherwise.
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

  async install(name: string, version: string | undefined, ctx: ApplyContext): Promise<void> {
    // Checked between steps but not handed to pacman: one stopped half way leaves its lock
    // and a half-written system behind.
    ctx.signal?.throwIfAborted();
    const options = await this.prepare(ctx);
    const target = version === undefined ? name : `${name}=${version}`;
    const sync = ['pacman', ...options, '--noconfirm', '--noprogressbar', '--needed', '--sync'];
    const run = (argv: readonly string[]): Promise<RunResult> => ctx.runner.run(argv, { env: ENVIRONMENT, timeoutMs: this.installTimeoutMs });

    let result = await run([...sync, target]);
    if (succeeded(result)) return;
    if (NOT_FOUND.test(result.stderr)) {
      ctx.signal?.throwIfAborted();
      // Twice: download every sync database even when its timestamp says it is current, since
      // a repository rewritten within the same second as the last download looks unchanged.
      result = await run([...sync, '--refresh', '--refresh', target]);
      if (succeeded(result)) return;
    }
    throw this.failure(name, version, result, ctx);
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

  private failure(name: string, version: string | undefined, result: RunResult, ctx: ApplyContext): PackageChangeFailed {
    const root = resolve(ctx.root);
    const said = lastWords(result);
    const program = 'pacman';
    const text = `${result.stderr}\n${result.stdout}`;
    if (LOCKED.test(text)) {
      const lock = join(root, 'var/lib/pacman/db.lck');
      return new PackageDatabaseLocked(join(root, 'var/lib/pacman'), {
        said,
        program,
        next: `another pacman is working on this machine and the host tries again at its next apply; if none is running (pacman was killed), remove ${lock}`,
      });
    }
    if (NOT_FOUND.test(text)) {
      const where =
        this.directory === undefined
          ? `make sure a repository in ${join(root, 'etc/pacman.conf')} has it; "pacman -Si ${name}" shows the version the machine can see`
          : `publish it into ${this.directory} and add it to ${this.repository}.db (repo-add)`;
      return new PackageNotInRepository(name, version, this.describe(), { said, program, next: `check the package name and version in the declaration, or ${where}` });
    }
    const target = version === undefined ? name : `${name}=${version}`;
    return new PackageInstallFailed(name, version, {
      said,
      program,
      next: `run "pacman -S --needed ${target}" on the machine to see the whole output and fix what it says; the host tries again at its next apply`,
    });
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
