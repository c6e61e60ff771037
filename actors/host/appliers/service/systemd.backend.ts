import type { ApplyContext } from '../applier';
import { ApplyFailed } from '../applier';
import { describeFailure } from '../../../shared/process/command-runner';
import { requireBootedRoot } from './booted-only';
import { requireRan, runServiceCommand, runServiceCommandOrFail } from './run-checked';
import type { ServiceBackend, ServiceStatus } from './service-backend';

/** Options for {@link systemdBackend}. */
export interface SystemdBackendOptions {
  /** The systemctl to run; `systemctl` from PATH unless told. */
  program?: string;
  /** How long one start or stop may take. */
  timeoutMs?: number;
}

// `is-enabled` words that mean the unit is started at boot or by another unit. `static`,
// `indirect`, `generated` and `transient` cannot be switched by enable/disable; they count as
// enabled so a declaration of `enabled: true` over them is satisfied, and the word is kept in
// the status so a declaration of `enabled: false` fails saying why.
const STARTED_AT_BOOT = new Set(['enabled', 'enabled-runtime', 'alias', 'static', 'indirect', 'generated', 'transient']);
const SWITCHABLE = new Set(['enabled', 'disabled']);
const UNIT_TYPE = /\.(?:service|socket|timer|target|path|mount|automount|swap|slice|scope|device)$/;

/**
 * Services through systemd's `systemctl`. Enablement goes through `systemctl --root=ROOT`
 * when the root is not `/`, which works offline (it only writes the `.wants/` links); running
 * state needs the booted systemd, so `is-active`, `start` and `stop` are refused for any other
 * root rather than answered for the wrong machine.
 */
export function systemdBackend(options: SystemdBackendOptions = {}): ServiceBackend {
  const program = options.program ?? 'systemctl';
  const timeoutMs = options.timeoutMs;
  const offline = (ctx: ApplyContext): string[] => (ctx.root === '/' ? [program] : [program, `--root=${ctx.root}`]);

  return {
    manager: 'systemd',

    async status(name, ctx): Promise<ServiceStatus> {
      const unit = systemdUnitName(name);
      const enablement = requireRan(await runServiceCommand(ctx, [...offline(ctx), 'is-enabled', unit], timeoutMs));
      const word = enablement.stdout.trim().split('\n')[0]?.trim() ?? '';
      if (word === '' || word === 'not-found') {
        if (word === 'not-found' || /No such file or directory|not found|does not exist/i.test(enablement.stderr)) {
          return { exists: false, running: false, enabled: false };
        }
        throw new ApplyFailed(describeFailure(enablement));
      }
      requireBootedRoot(ctx, 'systemd', 'tell whether a service is running');
      const activity = requireRan(await runServiceCommand(ctx, [program, 'is-active', unit], timeoutMs));
      const active = activity.stdout.trim();
      if (active === '') throw new ApplyFailed(describeFailure(activity));
      return {
        exists: true,
        running: active === 'active' || active === 'reloading',
        enabled: STARTED_AT_BOOT.has(word),
        ...(SWITCHABLE.has(word) ? {} : { detail: word }),
      };
    },

    async start(name, ctx) {
      requireBootedRoot(ctx, 'systemd', 'start a service');
      await runServiceCommandOrFail(ctx, [program, 'start', systemdUnitName(name)], timeoutMs);
    },

    async stop(name, ctx) {
      requireBootedRoot(ctx, 'systemd', 'stop a service');
      await runServiceCommandOrFail(ctx, [program, 'stop', systemdUnitName(name)], timeoutMs);
    },

    async enable(name, ctx) {
      await runServiceCommandOrFail(ctx, [...offline(ctx), 'enable', systemdUnitName(name)], timeoutMs);
    },

    async disable(name, ctx) {
      await runServiceCommandOrFail(ctx, [...offline(ctx), 'disable', systemdUnitName(name)], timeoutMs);
    },
  };
}

/**
 * The full unit name for a service resource's name: `nginx` → `nginx.service`; a name that
 * already ends in a unit type (`getty@tty1.service`, `fstrim.timer`) is kept. Naming the unit
 * in full leaves systemctl nothing to guess.
 */
export function systemdUnitName(name: string): string {
  return UNIT_TYPE.test(name) ? name : `${name}.service`;
}
