import { ProcessRunner, describeFailure, succeeded, type RunOptions } from '../../../../shared/process/command-runner';

const runner = new ProcessRunner();

/** Runs a tool a test helper needs (dpkg-deb, tar, repo-add) and throws with its words when it fails. */
export async function runTool(argv: readonly string[], options: RunOptions = {}): Promise<string> {
  const result = await runner.run(argv, { ...options, env: { LC_ALL: 'C', ...options.env } });
  if (!succeeded(result)) throw new Error(describeFailure(result));
  return result.stdout;
}
