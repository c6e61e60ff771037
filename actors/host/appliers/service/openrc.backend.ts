import { requireBootedRoot } from './booted-only';
import { requireRan, runServiceCommand, runServiceCommandOrFail } from './run-checked';
import type { ServiceBackend, ServiceStatus } from './service-backend';

/** Options for {@link openrcBackend}. */
export interface OpenRcBackendOptions {
  /** The runlevel "enabled" means; `default`, where `rc-update add NAME` puts a service. */
  runlevel?: string;
  /** How long one start or stop may take. */
  timeoutMs?: number;
}

/**
 * Services through OpenRC (Alpine, Gentoo): `rc-service --exists` and `rc-service NAME status`
 * to ask, `rc-service NAME start|stop`, and `rc-update add|del NAME RUNLEVEL` for boot.
 * OpenRC's tools have no root option, so only the machine's own root `/` is driven.
 */
export function openrcBackend(options: OpenRcBackendOptions = {}): ServiceBackend {
  const runlevel = options.runlevel ?? 'default';
  const timeoutMs = options.timeoutMs;

  return {
    manager: 'OpenRC',

    async status(name, ctx): Promise<ServiceStatus> {
      requireBootedRoot(ctx, 'OpenRC', 'read a service');
      const exists = requireRan(await runServiceCommand(ctx, ['rc-service', '--exists', name], timeoutMs));
      if (exists.code !== 0) return { exists: false, running: false, enabled: false };
      // Exit 0 is "started"; 3 stopped, 32 crashed, and the rest are some way of not running.
      const status = requireRan(await runServiceCommand(ctx, ['rc-service', name, 'status'], timeoutMs));
      const shown = await runServiceCommandOrFail(ctx, ['rc-update', 'show', runlevel], timeoutMs);
      return { exists: true, running: status.code === 0, enabled: servicesInRunlevel(shown.stdout, runlevel).has(name) };
    },

    async start(name, ctx) {
      requireBootedRoot(ctx, 'OpenRC', 'start a service');
      await runServiceCommandOrFail(ctx, ['rc-service', name, 'start'], timeoutMs);
    },

    async stop(name, ctx) {
      requireBootedRoot(ctx, 'OpenRC', 'stop a service');
      await runServiceCommandOrFail(ctx, ['rc-service', name, 'stop'], timeoutMs);
    },

    async enable(name, ctx) {
      requireBootedRoot(ctx, 'OpenRC', 'enable a service');
      await runServiceCommandOrFail(ctx, ['rc-update', 'add', name, runlevel], timeoutMs);
    },

    async disable(name, ctx) {
      requireBootedRoot(ctx, 'OpenRC', 'disable a service');
      await runServiceCommandOrFail(ctx, ['rc-update', 'del', name, runlevel], timeoutMs);
    },
  };
}

/**
 * The services `rc-update show RUNLEVEL` lists in that runlevel. Its lines read
 * `   sshd |      default` (a service, a bar, the runlevels it is in).
 */
export function servicesInRunlevel(output: string, runlevel: string): Set<string> {
  const names = new Set<string>();
  for (const line of output.split('\n')) {
    const bar = line.indexOf('|');
    if (bar < 0) continue;
    const name = line.slice(0, bar).trim();
    const levels = line.slice(bar + 1).trim().split(/\s+/);
    if (name !== '' && levels.includes(runlevel)) names.add(name);
  }
  return names;
}
