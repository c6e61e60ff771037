import { ApplyFailed } from '../applier';
import type { ApplyContext } from '../applier';

/**
 * An init that is running answers for the machine it booted, not for a folder: asking the
 * booted systemd about a unit under `/mnt/target` would read and change the wrong machine. So
 * the backends that talk to a running init refuse any root but `/`.
 */
export function requireBootedRoot(ctx: ApplyContext, manager: string, what: string): void {
  if (ctx.root === '/') return;
  throw new ApplyFailed(
    `${manager} can ${what} only on the booted machine (root "/"), not in the root "${ctx.root}"; ` +
      'run the host against "/" or use the start-stop-daemon backend',
  );
}
