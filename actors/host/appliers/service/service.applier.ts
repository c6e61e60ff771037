import path from 'node:path';
import * as fs from '../../../shared/fs/promised-fs';
import { ServiceResource } from '../../../../schema/resource';
import { writeFileAtomic } from '../../../shared/fs/atomic-write';
import type { Applier, ApplyContext, Observation } from '../applier';
import { ApplyFailed } from '../applier';
import { pathExists } from '../path-exists';
import { HOST_UNIT_REFUSAL, namesHostUnit } from '../../../shared/host-unit/host-unit';
import type { ServiceBackend, ServiceStatus } from './service-backend';
import { utcTimestamp } from '../../../shared/time/utc-timestamp';

/**
 * The `service` applier over one init system. It starts or stops a service and switches
 * whether it starts at boot; the unit (or init script, or definition) is never the host's,
 * so nothing here writes or deletes one.
 *
 * Removal stops the service and, when the init can switch it, disables it: "stopped" in the
 * removal table has to hold across a reboot, or a service nobody declares any more would be
 * back the next morning. The unit stays, so `systemctl enable --now` (or the like) brings it
 * back by hand.
 *
 * The host's own unit and its launcher are refused in every spelling, by `refuse` and again by
 * `apply` and `remove`: the installation owns the host; the host owns everything else.
 */
export function serviceApplier(backend: ServiceBackend): Applier<ServiceResource> {
  return {
    shape: 'service',

    refuse(resource, ctx) {
      return namesHostUnit(resource.name, ctx.hostUnit) ? HOST_UNIT_REFUSAL : undefined;
    },

    async observe(resource, ctx): Promise<Observation> {
      let status: ServiceStatus;
      try {
        status = await backend.status(resource.name, ctx);
      } catch (error) {
        return { present: false, differences: [], unreadable: reasonOf(error) };
      }
      const differences = serviceDifferences(resource, status);
      const changed = restartDue(resource, status, ctx);
      if (changed !== undefined) differences.push(`restart: ${changed}`);
      return { present: status.exists, differences };
    },

    async apply(resource, ctx) {
      refuseHostUnit(resource.name, ctx);
      const status = await backend.status(resource.name, ctx);
      if (!status.exists) {
        throw new ApplyFailed(`no such service "${resource.name}" in ${backend.manager}: declare the package that installs it first`);
      }
      // Boot first, then now: a start that fails still leaves the boot setting declared.
      if (resource.enabled && !status.enabled) await backend.enable(resource.name, ctx);
      if (!resource.enabled && status.enabled) await backend.disable(resource.name, ctx);
      if (restartDue(resource, status, ctx) !== undefined) {
        await backend.stop(resource.name, ctx);
        await backend.start(resource.name, ctx);
      } else if (resource.state === 'running' && !status.running) {
        await backend.start(resource.name, ctx);
      }
      if (resource.state === 'stopped' && status.running) await backend.stop(resource.name, ctx);
      // Started or restarted, it has read every file of this pass so far: not again for them.
      if (resource.state === 'running') ctx.pass?.servicesRestarted.add(resource.name);
      return {};
    },

    async remove(key, ctx) {
      const name = serviceNameOfKey(key);
      refuseHostUnit(name, ctx);
      const status = await backend.status(name, ctx);
      if (!status.exists) return 'stopped';
      if (status.running) await backend.stop(name, ctx);
      // Only a plain "enabled" is switched off; a static or generated unit is the init's.
      if (status.enabled && status.detail === undefined) await backend.disable(name, ctx);
      return 'stopped';
    },

    async keepOriginal(resource, ctx, dir) {
      const status = await backend.status(resource.name, ctx);
      if (!status.exists) return undefined;
      const file = path.join(dir, `service-${encodeURIComponent(resource.name)}.json`);
      // The first copy is the machine's; a later one would be what the host itself had set.
      if (await pathExists(file)) return file;
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      const kept = {
        service: resource.name,
        manager: backend.manager,
        running: status.running,
        enabled: status.enabled,
        ...(status.detail === undefined ? {} : { detail: status.detail }),
        kept_at: utcTimestamp(Date.now()),
      };
      await writeFileAtomic(file, `${JSON.stringify(kept, null, 2)}\n`);
      return file;
    },
  };
}

/**
 * Why the service is due a restart, when it is declared and found running and was not restarted
 * (or started) since in this pass: the first of `resource.restart_on` this pass wrote, or a
 * restart an earlier pass owed it and could not carry out (HostState.restarts_owed); undefined
 * otherwise. A service found stopped is simply started, which reads the new file anyway.
 */
export function restartDue(resource: ServiceResource, status: ServiceStatus, ctx: ApplyContext): string | undefined {
  if (resource.restart_on === undefined || resource.state !== 'running' || !status.exists || !status.running) return undefined;
  if (ctx.pass === undefined || ctx.pass.servicesRestarted.has(resource.name)) return undefined;
  const written = resource.restart_on.find((path) => ctx.pass?.filesWritten.has(path));
  if (written !== undefined) return `${written} changed in this pass`;
  return ctx.pass.restartsOwed.has(resource.name) ? 'owed since an earlier pass wrote a file it restarts on and stopped before restarting it' : undefined;
}

/** What differs between a declared service and what the init says, one readable line each. */
export function serviceDifferences(resource: ServiceResource, status: ServiceStatus): string[] {
  if (!status.exists) return ['no such service'];
  const differences: string[] = [];
  const detail = status.detail === undefined ? '' : ` (${status.detail})`;
  if (resource.state === 'running' && !status.running) differences.push('not running, declared running');
  if (resource.state === 'stopped' && status.running) differences.push('running, declared stopped');
  if (resource.enabled && !status.enabled) differences.push(`disabled${detail}, declared enabled`);
  if (!resource.enabled && status.enabled) differences.push(`enabled${detail}, declared disabled`);
  return differences;
}

/** The service name in a `service:<name>` key, checked as a declaration would check it. */
export function serviceNameOfKey(key: string): string {
  const name = key.startsWith('service:') ? key.slice('service:'.length) : undefined;
  if (name === undefined || !ServiceResource.shape.name.safeParse(name).success) {
    throw new ApplyFailed(`not a service resource key: ${JSON.stringify(key)}`);
  }
  return name;
}

function refuseHostUnit(name: string, ctx: ApplyContext): void {
  if (namesHostUnit(name, ctx.hostUnit)) throw new ApplyFailed(`${HOST_UNIT_REFUSAL} ("${name}")`);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
