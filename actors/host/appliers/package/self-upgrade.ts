import path from 'node:path';
import { open } from '../../../shared/fs/promised-fs';
import type { PackageResource } from '../../../../schema/resource';
import { describeFailure, succeeded, type RunResult } from '../../../shared/process/command-runner';
import { markRestartDue } from '../../launch-state/restart-due';
import { ApplyFailed, type ApplyContext, type ApplyOutcome } from '../applier';
import type { PackageBackend } from './package-backend';
import { describePackage } from './package-errors';

/** The host's own package. A `package` resource naming it is the host upgrading itself. */
export const HOST_PACKAGE = 'nox-mesh-host';

/** Where every package of the host installs its binary (under the machine's root). */
export const HOST_BINARY = '/usr/bin/nox-mesh-host';

/** How long the new binary may take to say its version: it loads, prints one line and exits. */
const VERSION_TIMEOUT_MS = 30_000;

/** Choices for a host's own upgrade; the defaults are a real machine's. */
export interface SelfUpgradeOptions {
  /** The installed host binary, as a path on the machine (resolved under the root). Default {@link HOST_BINARY}. */
  binary?: string;
  /** How long `version` may run. Default 30 s. */
  versionTimeoutMs?: number;
}

/**
 * The host's package installed a binary that does not run here: it would not start, exited
 * non-zero, or did not answer as the host. The old host is still running (Unix keeps its
 * inode); the version it replaced has been put back where that worked.
 */
export class NewHostDoesNotRun extends ApplyFailed {
  /** Why the new binary failed its check, in one line. */
  readonly reason: string;
  /** What became of the version that was installed before. */
  readonly putBack: string;

  constructor(target: string, binary: string, reason: string, putBack: string) {
    super(
      `installed ${target}, but its binary ${binary} does not run here (${reason}), so the host will not restart onto it and keeps running; ${putBack}; ` +
        'next: build the package for this machine (its system, architecture and libc) and declare that version',
    );
    this.name = 'NewHostDoesNotRun';
    this.reason = reason;
    this.putBack = putBack;
  }
}

/**
 * Applies the host's own package (seed 000, "The restart"): installs it, then runs the newly
 * installed binary's `version` as a subprocess before committing to anything. A package can
 * install a binary that does not execute on this machine (another architecture, a libc that is
 * not present); running it once turns "the node never came back" into "the apply failed and
 * said why".
 *
 * When the new binary answers, the restart is marked due (see restart-due): the run loop
 * finishes the pass, reports, and exits 0 so the launcher starts the new binary. The host never
 * asks the service manager to restart it, which would stop it half way through an apply.
 *
 * When it does not, the apply fails with the reason and the version that was installed before
 * is installed again, so the package database says what is running and the next pass tries
 * (and reports) again instead of finding the declared version "installed". Where that version
 * cannot be had again, the failure says so: the launcher's roll back is what remains.
 */
export async function upgradeHost(
  backend: PackageBackend,
  resource: PackageResource,
  ctx: ApplyContext,
  options: SelfUpgradeOptions = {},
): Promise<ApplyOutcome> {
  const before = await backend.installed(resource.name, ctx);
  await backend.install(resource.name, resource.version, ctx);
  const binary = options.binary ?? HOST_BINARY;
  const check = await checkNewHost(path.join(path.resolve(ctx.root), binary), ctx, options.versionTimeoutMs ?? VERSION_TIMEOUT_MS);
  if ('reason' in check) {
    const putBack = await putBackVersion(backend, resource.name, before, ctx);
    throw new NewHostDoesNotRun(describePackage(resource.name, resource.version), binary, check.reason, putBack);
  }
  const installed = resource.version === undefined ? check.said : `${check.said}, package ${resource.version}`;
  await markRestartDue(ctx.stateDir, installed);
  return { output: `the new binary runs here (it said "${check.said}"); the host restarts onto it once this pass is reported\n` };
}

/** Runs `<file> version`: what it said when it answered as the host, or why it did not. */
async function checkNewHost(file: string, ctx: ApplyContext, timeoutMs: number): Promise<{ said: string } | { reason: string }> {
  // Read first: the C library runs a file the kernel refuses (ENOEXEC) through /bin/sh, so a
  // binary for another architecture would fail as a confusing shell error rather than say so.
  const unfit = await notAProgramHere(file);
  if (unfit !== undefined) return { reason: unfit };
  const result = await ctx.runner.run([file, 'version'], { timeoutMs, maxOutputBytes: 4096, ...(ctx.signal === undefined ? {} : { signal: ctx.signal }) });
  const line = result.stdout.split('\n')[0]?.trim() ?? '';
  if (succeeded(result) && /^nox-mesh-host \S+$/.test(line)) return { said: line };
  return { reason: whyNot(result) };
}

/** ELF `e_machine` for each architecture Node runs on, to tell a binary built for another. */
const ELF_MACHINE: Partial<Record<string, number>> = { x64: 62, arm64: 183, arm: 40, ia32: 3, riscv64: 243, ppc64: 21, s390x: 22, loong64: 258 };

/**
 * Why the file cannot be a program on this machine, or undefined when it may be one: an ELF
 * executable for this architecture, or a script (`#!`). A missing file is left to the run.
 */
async function notAProgramHere(file: string): Promise<string | undefined> {
  let head: Buffer;
  try {
    const handle = await open(file, 'r');
    try {
      head = Buffer.alloc(20);
      head = head.subarray(0, await handle.read(head, 0));
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
  if (head.subarray(0, 2).toString('latin1') === '#!') return undefined;
  if (head.length < 20 || head.subarray(0, 4).toString('latin1') !== '\x7fELF') {
    return 'it is not a program: neither an ELF executable nor a script';
  }
  const expected = ELF_MACHINE[process.arch];
  const machine = head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18);
  if (expected !== undefined && machine !== expected) {
    const name = Object.entries(ELF_MACHINE).find(([, value]) => value === machine)?.[0] ?? `ELF machine ${machine}`;
    return `it is built for another architecture (${name}), and this machine is ${process.arch}`;
  }
  return undefined;
}

/** One line on why the new binary failed, in the terms of the likely cause. */
function whyNot(result: RunResult): string {
  const error = result.spawnError ?? '';
  if (/EACCES/.test(error)) return `it is not executable (${error})`;
  if (/ENOENT/.test(error)) return `it, or the dynamic loader it names (a libc this machine does not have), is missing (${error})`;
  if (succeeded(result)) {
    const first = result.stdout.split('\n')[0]?.trim() ?? '';
    return `"version" did not answer as nox-mesh-host: it said ${JSON.stringify(first.slice(0, 200))}`;
  }
  return describeFailure(result);
}

/** Installs the version that was there before the upgrade, and says how that went. */
async function putBackVersion(backend: PackageBackend, name: string, before: string | undefined, ctx: ApplyContext): Promise<string> {
  if (before === undefined) {
    return `the package was not installed before, so there is no version to put back (the package stays installed and the launcher rolls back to known-good if the host restarts)`;
  }
  try {
    await backend.install(name, before, ctx);
    return `version ${before}, which was installed before, has been put back`;
  } catch (error) {
    return `putting back version ${before} failed as well (${error instanceof Error ? error.message : String(error)}); the launcher rolls back to known-good if the host restarts`;
  }
}
