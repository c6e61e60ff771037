import type { BaseContext } from 'clipanion';
import { ProcessRunner, type CommandRunner } from '../../shared/process/command-runner';

/**
 * The CLI context of the verbs that run other programs. `runner` is left out in production
 * (the real process runner is used) and given by tests, which run the verbs in-process.
 */
export interface RunnerContext extends BaseContext {
  runner?: CommandRunner;
}

/** The runner a verb should use: the context's when it carries one, else real processes. */
export function runnerFrom(context: BaseContext): CommandRunner {
  return (context as RunnerContext).runner ?? new ProcessRunner();
}
