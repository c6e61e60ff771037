import type { CommandRunner, RunOptions, RunResult } from '../../../../shared/process/command-runner';
import { readApkInstalledForFake, writeApkInstalled } from './apk-installed-file';

/**
 * A recording fake of the `apk` program, because apk-tools is not packaged for Debian and so
 * cannot run here. It answers `apk [--root R] [--update-cache] add name[=version]` the way apk
 * does — the same messages for a missing package, a missing version and a held lock — and
 * records an install by writing `lib/apk/db/installed` in apk's format, so the backend's
 * read-back is tested against the real file format. Every call is kept in `calls`.
 *
 * `published` is what the repository has; the machine's index holds only what was published
 * when it last fetched (`--update-cache`), so a version published later is found only after
 * a refresh, as on a real machine.
 */
export class FakeApkRunner implements CommandRunner {
  readonly calls: string[][] = [];
  /** name → versions the repository has now. */
  readonly published = new Map<string, string[]>();
  /** Set to make every apk call fail as if another apk held the database lock. */
  locked = false;
  private indexed = new Map<string, string[]>();

  /** Puts a version into the repository (the machine sees it after its next index fetch). */
  publish(name: string, version: string): void {
    this.published.set(name, [...(this.published.get(name) ?? []), version]);
  }

  async run(argv: readonly string[], _options?: RunOptions): Promise<RunResult> {
    this.calls.push([...argv]);
    if (argv[0] !== 'apk') return this.result(argv, 127, '', `${argv[0]}: not found (FakeApkRunner only plays apk)\n`);
    const rootAt = argv.indexOf('--root');
    const root = rootAt >= 0 ? (argv[rootAt + 1] as string) : '/';
    if (root === '/') return this.result(argv, 1, '', "ERROR: FakeApkRunner will not write the real machine's database: give the backend a test root\n");
    const addAt = argv.indexOf('add');
    if (addAt < 0) return this.result(argv, 1, '', 'ERROR: FakeApkRunner only plays "apk add"\n');
    if (this.locked) {
      return this.result(argv, 99, '', 'ERROR: Unable to lock database: Resource temporarily unavailable\nERROR: Failed to open apk database: Resource temporarily unavailable\n');
    }
    if (argv.includes('--update-cache') || argv.includes('-U')) this.indexed = new Map([...this.published].map(([name, versions]) => [name, [...versions]]));

    const installed = await readApkInstalledForFake(root);
    const lines: string[] = [];
    for (const target of argv.slice(addAt + 1)) {
      const [name, version] = target.split('=') as [string, string | undefined];
      const versions = this.indexed.get(name) ?? [];
      if (versions.length === 0) {
        return this.result(argv, 1, '', `ERROR: unable to select packages:\n  ${name} (no such package):\n    required by: world[${target}]\n`);
      }
      const chosen = version ?? versions[versions.length - 1];
      if (chosen === undefined || !versions.includes(chosen)) {
        return this.result(argv, 1, '', `ERROR: unable to select packages:\n  ${name}-${versions[versions.length - 1]}:\n    breaks: world[${target}]\n`);
      }
      const before = installed.get(name);
      if (before !== chosen) {
        lines.push(before === undefined ? `(1/1) Installing ${name} (${chosen})` : `(1/1) Upgrading ${name} (${before} -> ${chosen})`);
        installed.set(name, chosen);
      }
    }
    await writeApkInstalled(root, installed);
    lines.push(`OK: 1 MiB in ${installed.size} packages`);
    return this.result(argv, 0, `${lines.join('\n')}\n`, '');
  }

  private result(argv: readonly string[], code: number, stdout: string, stderr: string): RunResult {
    return { argv, code, signal: null, stdout, stderr, timedOut: false, durationMs: 0 };
  }
}
