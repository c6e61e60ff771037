import { resolve } from 'node:path';
import type { ActionResource } from '../../../schema/resource';
import type { RunOptions, RunResult } from '../../shared/process/command-runner';
import type { ApplyContext, Applier, ApplyOutcome, Observation, Removal } from './applier';
import { ApplyFailed } from './applier';
import { errorText, lstatOrAbsent, resolveUnderRoot } from './root-path';

// An action is a command run when its guard says it has not yet had its effect: `creates`
// (a path that exists once it ran) or `unless` (a command that exits 0 once it ran). The guard
// is asked in observe and again in apply, so applying twice runs the command once.
//
// Where it runs. An action runs on the real machine: the host does not chroot, because the
// programs an action names live on the machine, not in a root. When the host manages a root
// other than `/` (a test root, an image being prepared) the command starts in that root
// (or its declared cwd under that root) with MESH_ROOT set to it, so a script can honour it
// (`"$MESH_ROOT/etc/…"`); `creates` is looked for under the root.
//
// What it sees. The command gets PATH and HOME from the host and the environment its
// declaration names, nothing else: what an action does must not depend on how the host
// happened to be started (an init, a shell, a rescue session), and the host's own environment
// is not the action's business.

/** What an apply keeps of an action's output for the report: head and tail, 16 KiB in all. */
export const ACTION_OUTPUT_LIMIT = 16 * 1024;
// Each stream the runner keeps before the report's bound applies; past this the runner keeps
// only the head, so the tail shown is the runner's note of what it dropped.
const RUNNER_KEEPS = 1024 * 1024;
const FAILURE_LINES = 10;
const FAILURE_LINE_LENGTH = 300;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Runs declared actions when their guard says they have not run; removing one forgets it. */
export const actionApplier: Applier<ActionResource> = {
  shape: 'action',

  async observe(resource: ActionResource, ctx: ApplyContext): Promise<Observation> {
    const guard = await askGuard(resource, ctx);
    if (guard.unreadable !== undefined) return { present: false, differences: [guard.unreadable], unreadable: guard.unreadable };
    if (guard.ran) return { present: true, differences: [] };
    return { present: false, differences: [`guard says the action has not run (${guard.why})`] };
  },

  async apply(resource: ActionResource, ctx: ApplyContext): Promise<ApplyOutcome> {
    if (ctx.signal?.aborted) throw new ApplyFailed(`stopped before running action "${resource.name}": the apply was left`);
    const guard = await askGuard(resource, ctx);
    if (guard.unreadable !== undefined) throw new ApplyFailed(`${guard.unreadable}; the action was not run`);
    if (guard.ran) return { skipped: `guard says the action already ran (${guard.why})` };
    const result = await ctx.runner.run(resource.argv, await runOptions(resource, ctx));
    if (ctx.signal?.aborted) throw new ApplyFailed(`action "${resource.name}" was stopped while it ran: the apply was left`);
    if (result.code !== 0 || result.timedOut || result.spawnError !== undefined) {
      throw new ApplyFailed(failureText(resource, result));
    }
    const output = boundOutput(combinedOutput(result), ACTION_OUTPUT_LIMIT);
    return output === '' ? {} : { output };
  },

  async remove(): Promise<Removal> {
    // An action leaves nothing the host owns: what it made is its command's, not the host's.
    return 'forgotten';
  },

  async keepOriginal(): Promise<string | undefined> {
    // Running an action writes over nothing the host could keep a copy of.
    return undefined;
  },
};

interface GuardAnswer {
  ran: boolean;
  /** The guard's own words: "/etc/ssl/ca.pem exists", "test -f /x exited 1". */
  why: string;
  /** The guard could not be asked; the action must not run blind. */
  unreadable?: string;
}

async function askGuard(resource: ActionResource, ctx: ApplyContext): Promise<GuardAnswer> {
  const { guard } = resource;
  if ('creates' in guard) {
    try {
      const real = await resolveUnderRoot(ctx, guard.creates);
      const ran = (await lstatOrAbsent(real)) !== undefined;
      return { ran, why: `${guard.creates} ${ran ? 'exists' : 'does not exist'}` };
    } catch (error) {
      const reason = `the guard of action "${resource.name}" cannot look for ${guard.creates}: ${errorText(error)}`;
      return { ran: false, why: reason, unreadable: reason };
    }
  }
  let options: RunOptions;
  try {
    options = await runOptions(resource, ctx);
  } catch (error) {
    return { ran: false, why: errorText(error), unreadable: errorText(error) };
  }
  const result = await ctx.runner.run(guard.unless, { ...options, maxOutputBytes: 4096 });
  const command = showArgv(guard.unless);
  if (result.code === 0 && !result.timedOut && result.spawnError === undefined) return { ran: true, why: `${command} exited 0` };
  if (result.code !== null && !result.timedOut && result.spawnError === undefined) return { ran: false, why: `${command} exited ${result.code}` };
  const reason = `the unless guard of action "${resource.name}" could not be asked: ${howItEnded(result)}${lastLines(result)}`;
  return { ran: false, why: reason, unreadable: reason };
}

async function runOptions(resource: ActionResource, ctx: ApplyContext): Promise<RunOptions> {
  const onRealMachine = resolve(ctx.root) === '/';
  const env: Record<string, string> = { PATH: process.env.PATH ?? DEFAULT_PATH, HOME: process.env.HOME ?? '/root', ...resource.env };
  if (!onRealMachine) env.MESH_ROOT = ctx.root;
  let cwd = onRealMachine ? (resource.cwd ?? '/') : ctx.root;
  if (resource.cwd !== undefined && !onRealMachine) cwd = await resolveUnderRoot(ctx, resource.cwd);
  const stats = await lstatOrAbsent(cwd);
  if (stats === undefined || !(stats.isDirectory() || stats.isSymbolicLink())) {
    throw new ApplyFailed(`action "${resource.name}" cannot start in ${resource.cwd ?? cwd}: no directory there; declare the directory or change cwd`);
  }
  return {
    env,
    replaceEnv: true,
    cwd,
    timeoutMs: resource.timeout_seconds * 1000,
    maxOutputBytes: RUNNER_KEEPS,
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
  };
}

function failureText(resource: ActionResource, result: RunResult): string {
  if (result.spawnError !== undefined) {
    return `action "${resource.name}" could not start ${showArgv(resource.argv.slice(0, 1))}: ${result.spawnError}; check that the program is installed and on PATH`;
  }
  const ending = result.timedOut ? `${howItEnded(result)} and was stopped` : howItEnded(result);
  return `action "${resource.name}" failed: ${showArgv(resource.argv)} ${ending}${lastLines(result)}`;
}

function howItEnded(result: RunResult): string {
  if (result.spawnError !== undefined) return `could not start: ${result.spawnError}`;
  if (result.timedOut) return `timed out after ${Math.round(result.durationMs / 1000)} s`;
  return result.code === null ? `was ended by ${result.signal ?? 'a signal'}` : `exited ${result.code}`;
}

// The end of what a failing command said: stderr, or stdout when stderr is empty.
function lastLines(result: RunResult): string {
  const [stream, text] = result.stderr.trim() !== '' ? ['stderr', result.stderr] : ['output', result.stdout];
  const lines = text.trimEnd().split('\n').filter((line) => line.trim() !== '');
  if (lines.length === 0) return '';
  const shown = lines.slice(-FAILURE_LINES).map((line) => (line.length > FAILURE_LINE_LENGTH ? `${line.slice(0, FAILURE_LINE_LENGTH)}…` : line));
  return `; last lines of ${stream}:\n${shown.map((line) => `  ${line}`).join('\n')}`;
}

function combinedOutput(result: RunResult): string {
  if (result.stderr === '') return result.stdout;
  const separator = result.stdout === '' || result.stdout.endsWith('\n') ? '' : '\n';
  return `${result.stdout}${separator}[stderr]\n${result.stderr}`;
}

/**
 * Bounds text to `limit` bytes of UTF-8, keeping the head and the tail (where a command says
 * how it ended) and saying how much was cut between them. Cuts fall on character boundaries.
 */
function boundOutput(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  // Room for the note, whose length depends on the number it carries (at most 20 digits).
  const half = Math.floor((limit - 48) / 2);
  let headEnd = half;
  while (headEnd > 0 && isContinuation(bytes[headEnd])) headEnd -= 1;
  let tailStart = bytes.length - half;
  while (tailStart < bytes.length && isContinuation(bytes[tailStart])) tailStart += 1;
  const cut = tailStart - headEnd;
  return `${bytes.subarray(0, headEnd).toString('utf8')}\n… ${cut} bytes cut …\n${bytes.subarray(tailStart).toString('utf8')}`;
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

function showArgv(argv: readonly string[]): string {
  const shown = argv.map((word) => (/^[A-Za-z0-9@%+=:,./_-]+$/.test(word) ? word : JSON.stringify(word))).join(' ');
  return shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
}
