import type { RunResult } from '../../../shared/process/command-runner';
import { describeFailure, succeeded } from '../../../shared/process/command-runner';
import { ApplyFailed } from '../applier';
import type { ApplyContext } from '../applier';

/** How long an init may take to start or stop one service before the host stops waiting. */
export const SERVICE_COMMAND_TIMEOUT_MS = 120_000;

/** Runs one init command for the applier, passing on the apply's abort signal. */
export function runServiceCommand(ctx: ApplyContext, argv: readonly string[], timeoutMs = SERVICE_COMMAND_TIMEOUT_MS): Promise<RunResult> {
  return ctx.runner.run(argv, { timeoutMs, ...(ctx.signal === undefined ? {} : { signal: ctx.signal }) });
}

/** Runs one init command that must succeed; its failure is the apply's failure, word for word. */
export async function runServiceCommandOrFail(ctx: ApplyContext, argv: readonly string[], timeoutMs?: number): Promise<RunResult> {
  const result = await runServiceCommand(ctx, argv, timeoutMs);
  if (!succeeded(result)) throw new ApplyFailed(describeFailure(result));
  return result;
}

/** Throws when a command could not run at all, so "not running" is never read from a missing program. */
export function requireRan(result: RunResult): RunResult {
  if (result.spawnError !== undefined || result.timedOut || result.code === null) throw new ApplyFailed(describeFailure(result));
  return result;
}
