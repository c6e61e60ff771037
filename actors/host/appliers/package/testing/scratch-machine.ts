import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandRunner } from '../../../../shared/process/command-runner';
import type { ApplyContext } from '../../applier';

let machines = 0;

/**
 * The context of a fresh machine under `scratch`, running its package manager through `runner`:
 * an empty state directory, and a root path no other machine of the test file has used. The root
 * itself is not made: each backend's test makes it look like its own distribution.
 */
export async function scratchMachine(scratch: string, runner: CommandRunner): Promise<ApplyContext> {
  machines += 1;
  const root = join(scratch, `root-${machines}`);
  const stateDir = join(scratch, `state-${machines}`);
  await mkdir(stateDir, { recursive: true });
  return { root, stateDir, runner, hostUnit: 'nox-mesh-host.service' };
}
