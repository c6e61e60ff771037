import { join, resolve } from 'node:path';
import { mkdir, writeFile } from '../../../shared/fs/promised-fs';
import type { ApplyContext } from '../applier';
import { pathExists } from '../path-exists';
import { succeeded, type RunResult } from '../../../shared/process/command-runner';
import { directoryOf } from './directory-source';
import { lastWords } from './last-words';
import { isMachineRoot } from './machine-root';
import { outputOf } from './output-of';
import { DEFAULT_INSTALL_TIMEOUT_MS, QUERY_TIMEOUT_MS, type PackageBackend, type PackageBackendOptions } from './package-backend';
import { PackageDatabaseUnreadable, type PackageChangeFailed } from './package-errors';
import { packageFailures } from './package-failures';
import { CONFIGURED_SOURCE, type PackageSource } from './package-source';
import { packageTarget } from './package-target';

// apt's words for "no such package or version in the lists it has".
const NOT_FOUND = /Unable to locate package|Version '[^']*' for '[^']*' was not found|has no installation candidate|Couldn't find any package/;
// apt's and dpkg's words for a lock held by another process (frontend lock, admin dir, lists).
const LOCKED = /Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock the administration directory|lock was locked by another process|database is locked by another process/;
const INTERRUPTED = /dpkg was interrupted/;

// Both tools print translated messages, and the classification above reads English.
const ENVIRONMENT = { LC_ALL: 'C', DEBIAN_FRONTEND: 'noninteractive', APT_LISTCHANGES_FRONTEND: 'none' };

/** apt's working directories that a fresh root may lack; apt refuses to start without them. */
const APT_DIRECTORIES = [
  'etc/apt/apt.conf.d',
  'etc/apt/preferences.d',
  'etc/apt/sources.list.d',
  'var/lib/apt/lists/partial',
  'var/cache/apt/archives/partial',
  'var/log/apt',
];

/**
 * Debian and its derivatives: apt-get installs (it resolves dependencies and fetches from the
 * repositories), dpkg-query reads back from the dpkg database.
 *
 * On the machine itself (root `/`) this is what a person would type:
 * `apt-get install --yes --allow-downgrades -o Dpkg::Options::=--force-confold name=version`.
 *
 * Under another root apt is pointed into it through `APT_CONFIG`, a small configuration file
 * kept in the host's state directory. It has to be that file rather than `-o` options because
 * apt reads its configuration files before its command line: only a `Dir` set in `APT_CONFIG`
 * keeps the host's own apt.conf.d (and the hooks in it, which run host commands) out. dpkg is
 * run with `--root` and `--force-script-chrootless`, so maintainer scripts run on the host with
 * `DPKG_ROOT` set, as Debian's own root bootstrapping does.
 *
 * With a `directory` source apt reads only the flat repository there
 * (`deb [trusted=yes] file:DIR ./`, a `Packages` file beside the `.deb` files), with its own
 * lists in the state directory so refreshing it never touches the machine's lists.
 */
export class DpkgBackend implements PackageBackend {
  readonly manager = 'apt' as const;
  private readonly source: PackageSource;
  private readonly directory: string | undefined;
  private readonly installTimeoutMs: number;

  constructor(options: PackageBackendOptions = {}) {
    this.source = options.source ?? CONFIGURED_SOURCE;
    this.directory = directoryOf(this.source);
    this.installTimeoutMs = options.installTimeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS;
  }

  describe(): string {
    return this.directory === undefined ? "apt/dpkg (the machine's apt sources)" : `apt/dpkg (the flat repository in ${this.directory})`;
  }

  async installed(name: string, ctx: ApplyContext): Promise<string | undefined> {
    const admindir = join(resolve(ctx.root), 'var/lib/dpkg');
    // dpkg-query answers "no packages found" for a database that does not exist at all.
    if (!(await pathExists(join(admindir, 'status')))) {
      throw new PackageDatabaseUnreadable(
        `there is no dpkg database at ${admindir}: this machine is not managed by dpkg, or its profile names the wrong package manager`,
      );
    }
    const result = await ctx.runner.run(
      ['dpkg-query', `--admindir=${admindir}`, '--show', '--showformat=${Version} ${db:Status-Status}\\n', name],
      { env: ENVIRONMENT, timeoutMs: QUERY_TIMEOUT_MS, signal: ctx.signal },
    );
    // A query ended by leaving the apply is not an unreadable database.
    ctx.signal?.throwIfAborted();
    if (result.code === 1 && /no packages found matching/.test(result.stderr)) return undefined;
    if (!succeeded(result)) throw new PackageDatabaseUnreadable(`dpkg-query could not read ${admindir}: ${lastWords(result)}`);
    // One line per architecture of a multi-arch name. Only "installed" counts: a package left
    // half-configured or unpacked by a failed install is not what was declared.
    for (const line of result.stdout.split('\n')) {
      const [version, status] = line.trim().split(' ');
      if (status === 'installed' && version !== undefined && version !== '') return version;
    }
    return undefined;
  }

  async install(name: string, version: string | undefined, ctx: ApplyContext): Promise<string | undefined> {
    // The signal is checked between steps but not handed to apt: a package manager stopped half
    // way leaves the dpkg database needing `dpkg --configure -a`, worse than finishing late.
    ctx.signal?.throwIfAborted();
    const apt = await this.prepare(ctx);
    const target = packageTarget(name, version);
    const install = [
      'apt-get', ...apt.options, 'install', '--yes', '--allow-downgrades',
      '-o', 'Dpkg::Options::=--force-confdef', '-o', 'Dpkg::Options::=--force-confold',
      target,
    ];
    const run = (argv: readonly string[]): Promise<RunResult> => ctx.runner.run(argv, { env: apt.env, timeoutMs: this.installTimeoutMs });

    let result = await run(install);
    if (succeeded(result)) return;
    if (NOT_FOUND.test(outputOf(result))) {
      // The lists may predate the version (one just published): refresh them once and retry.
      ctx.signal?.throwIfAborted();
      const update = await run(['apt-get', ...apt.options, 'update']);
      ctx.signal?.throwIfAborted();
      // One broken source fails the whole refresh while the others were read; try anyway.
      result = await run(install);
      if (succeeded(result)) return;
      // Still not found after a failed refresh: the refresh is the reason to report.
      if (!succeeded(update) && NOT_FOUND.test(outputOf(result))) throw this.failure(name, version, update, ctx, 'update');
    }
    throw this.failure(name, version, result, ctx);
  }

  /** The options and environment that point apt at the root and the source. */
  private async prepare(ctx: ApplyContext): Promise<{ options: string[]; env: Record<string, string> }> {
    const root = resolve(ctx.root);
    const work = join(ctx.stateDir, 'packages', 'apt');
    const env: Record<string, string> = { ...ENVIRONMENT };
    const options: string[] = [];
    if (!isMachineRoot(root)) {
      await Promise.all(APT_DIRECTORIES.map((directory) => mkdir(join(root, directory), { recursive: true })));
      await mkdir(work, { recursive: true });
      const config = join(work, 'root.conf');
      await writeFile(config, aptConfigurationForRoot(root));
      env.APT_CONFIG = config;
    }
    if (this.directory !== undefined) {
      const sourceList = join(work, 'sources.list');
      const sourceParts = join(work, 'sources.list.d');
      const lists = join(work, 'lists');
      await mkdir(join(lists, 'partial'), { recursive: true });
      await mkdir(sourceParts, { recursive: true });
      await writeFile(sourceList, `deb [trusted=yes] file:${this.directory} ./\n`);
      options.push(
        '-o', `Dir::Etc::SourceList=${sourceList}`,
        '-o', `Dir::Etc::SourceParts=${sourceParts}`,
        '-o', `Dir::State::Lists=${lists}`,
        // The binary caches are keyed to the machine's sources; with other sources, build none.
        '-o', 'Dir::Cache::pkgcache=',
        '-o', 'Dir::Cache::srcpkgcache=',
      );
    }
    return { options, env };
  }

  private failure(name: string, version: string | undefined, result: RunResult, ctx: ApplyContext, step: 'install' | 'update' = 'install'): PackageChangeFailed {
    const root = resolve(ctx.root);
    const text = outputOf(result);
    const failures = packageFailures({ name, version, result, program: result.argv[0] ?? 'apt-get', source: this.describe() });
    if (LOCKED.test(text)) {
      return failures.locked(
        join(root, 'var/lib/dpkg'),
        'another package manager (unattended-upgrades, or a person running apt) is working on this machine; the host tries again at its next apply. Never delete the lock files',
      );
    }
    if (NOT_FOUND.test(text)) {
      const where =
        this.directory === undefined
          ? `make sure the machine's apt sources (${join(root, 'etc/apt/sources.list.d')}) name a repository that has it; "apt-cache policy ${name}" lists the versions the machine can see`
          : `publish it into ${this.directory} and regenerate its Packages file (dpkg-scanpackages . > Packages)`;
      return failures.notInRepository(`check the package name and version in the declaration, or ${where}`);
    }
    if (INTERRUPTED.test(text)) {
      return failures.installFailed('an earlier install was interrupted: run "dpkg --configure -a" on the machine; the host tries again at its next apply');
    }
    return failures.runByHand(step === 'update' ? 'apt-get update' : `apt-get install ${packageTarget(name, version)}`);
  }
}

/** apt configuration that confines apt and dpkg to `root` (see {@link DpkgBackend}). */
function aptConfigurationForRoot(root: string): string {
  if (/["\n\\]/.test(root)) throw new TypeError(`a root path for apt must not contain quotes, backslashes or newlines, got ${JSON.stringify(root)}`);
  return [
    `Dir "${root}/";`,
    `Dir::State::status "${root}/var/lib/dpkg/status";`,
    `DPkg::Options { "--root=${root}"; "--force-script-chrootless"; };`,
    // The unprivileged _apt user cannot enter a private temporary root; the root is the host's own.
    'APT::Sandbox::User "root";',
    '',
  ].join('\n');
}
