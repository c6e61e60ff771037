import { join, resolve } from 'node:path';
import { readFile } from '../../../shared/fs/promised-fs';
import type { ApplyContext } from '../applier';
import { succeeded, type RunResult } from '../../../shared/process/command-runner';
import { parseApkInstalled } from './apk-installed-database';
import { directoryOf } from './directory-source';
import { isMachineRoot } from './machine-root';
import { outputOf } from './output-of';
import { DEFAULT_INSTALL_TIMEOUT_MS, type PackageBackend, type PackageBackendOptions } from './package-backend';
import { PackageDatabaseUnreadable, type PackageChangeFailed } from './package-errors';
import { packageFailures } from './package-failures';
import { CONFIGURED_SOURCE, type PackageSource } from './package-source';
import { packageTarget } from './package-target';

// apk's words when no repository has the name, or none has the pinned version.
const NOT_FOUND = /\(no such package\)|breaks: world\[/;
// Another apk holds the database lock (EAGAIN, as musl and glibc word it).
const LOCKED = /Unable to lock database: (?:Resource temporarily unavailable|Try again)/;

/**
 * Alpine: `apk add name=version` installs (upgrading or downgrading, and pinning the version in
 * the world file so a later `apk upgrade` does not move it), and the read-back parses apk's
 * database file `lib/apk/db/installed` under the root directly: it is plain text, and reading
 * it needs no apk and takes no lock.
 *
 * Under another root apk is given `--root`, which moves everything apk uses (database,
 * repositories, keys, cache) into it. When the name or version is not found the indexes are
 * fetched afresh once (`--update-cache`) and the install tried again.
 *
 * With a `directory` source the repository in that directory (`<arch>/APKINDEX.tar.gz`
 * beside the packages) is added with `--repository`, unsigned (`--allow-untrusted`).
 */
export class ApkBackend implements PackageBackend {
  readonly manager = 'apk' as const;
  private readonly directory: string | undefined;
  private readonly installTimeoutMs: number;

  constructor(options: PackageBackendOptions = {}) {
    const source: PackageSource = options.source ?? CONFIGURED_SOURCE;
    this.directory = directoryOf(source);
    this.installTimeoutMs = options.installTimeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS;
  }

  describe(): string {
    return this.directory === undefined ? "apk (the machine's /etc/apk/repositories)" : `apk (the repository in ${this.directory})`;
  }

  async installed(name: string, ctx: ApplyContext): Promise<string | undefined> {
    const database = join(resolve(ctx.root), 'lib/apk/db/installed');
    let text: string;
    try {
      text = await readFile(database, 'utf8');
    } catch (error) {
      const reason =
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? `there is no apk database at ${database}: this machine is not managed by apk, or its profile names the wrong package manager`
          : `cannot read ${database}: ${(error as Error).message}`;
      throw new PackageDatabaseUnreadable(reason, { cause: error });
    }
    return parseApkInstalled(text).get(name);
  }

  async install(name: string, version: string | undefined, ctx: ApplyContext): Promise<string | undefined> {
    // Checked between steps but not handed to apk: one stopped half way leaves a half-written system.
    ctx.signal?.throwIfAborted();
    const root = resolve(ctx.root);
    const global = [
      ...(isMachineRoot(root) ? [] : ['--root', root]),
      ...(this.directory === undefined ? [] : ['--repository', this.directory, '--allow-untrusted']),
      '--no-progress',
    ];
    const target = packageTarget(name, version);
    // apk asks for confirmation only where /etc/apk/interactive exists; the answer is yes.
    const run = (argv: readonly string[]): Promise<RunResult> =>
      ctx.runner.run(argv, { env: { LC_ALL: 'C' }, timeoutMs: this.installTimeoutMs, input: 'y\n' });

    let result = await run(['apk', ...global, 'add', target]);
    if (succeeded(result)) return;
    if (NOT_FOUND.test(outputOf(result))) {
      ctx.signal?.throwIfAborted();
      result = await run(['apk', ...global, '--update-cache', 'add', target]);
      if (succeeded(result)) return;
    }
    throw this.failure(name, version, result, root);
  }

  private failure(name: string, version: string | undefined, result: RunResult, root: string): PackageChangeFailed {
    const text = outputOf(result);
    const failures = packageFailures({ name, version, result, program: 'apk', source: this.describe() });
    if (LOCKED.test(text)) {
      return failures.locked(join(root, 'lib/apk/db'), 'another apk is working on this machine; the host tries again at its next apply');
    }
    if (NOT_FOUND.test(text)) {
      const where =
        this.directory === undefined
          ? `make sure a repository in ${join(root, 'etc/apk/repositories')} has it; "apk policy ${name}" shows the versions the machine can see`
          : `publish it into ${this.directory} and rebuild its APKINDEX (apk index)`;
      return failures.notInRepository(`check the package name and version in the declaration, or ${where}`);
    }
    return failures.runByHand(`apk add ${packageTarget(name, version)}`);
  }
}
