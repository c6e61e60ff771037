import path from 'node:path';
import * as fs from '../../../shared/fs/promised-fs';
import { ContainerResource } from '../../../../schema/resource';
import { writeFileAtomic } from '../../../shared/fs/atomic-write';
import type { Applier, Observation } from '../applier';
import { ApplyFailed } from '../applier';
import { pathExists } from '../path-exists';
import type { ContainerBackend, ContainerFacts } from './container-backend';
import { compareContainer, containerDifferences } from './container-differences';
import { hostLabels, isHostContainer } from './container-labels';

/**
 * The `container` applier over one engine. A container is created with the host's labels and
 * kept running; anything the engine cannot change in place (image, command, environment,
 * ports, volumes, restart policy, or a container the host did not create) is put right by
 * removing the container and creating it again. A container that merely stopped is started.
 *
 * Removal removes only a container that carries the host's owner label: one the host did not
 * create is forgotten, never removed. Taking over a person's container is adoption's deliberate
 * act, and adoption keeps the original (`keepOriginal`) before `apply` replaces it.
 */
export function containerApplier(backend: ContainerBackend): Applier<ContainerResource> {
  return {
    shape: 'container',

    async observe(resource, ctx): Promise<Observation> {
      let facts: ContainerFacts | undefined;
      try {
        facts = await backend.inspect(resource.name, ctx);
      } catch (error) {
        return { present: false, differences: [], unreadable: error instanceof Error ? error.message : String(error) };
      }
      if (facts === undefined) return { present: false, differences: ['no such container'] };
      return { present: true, differences: containerDifferences(compareContainer(resource, facts)) };
    },

    async apply(resource, ctx) {
      const facts = await backend.inspect(resource.name, ctx);
      if (facts !== undefined) {
        const comparison = compareContainer(resource, facts);
        if (comparison.replace.length === 0) {
          if (comparison.notRunning !== undefined) await backend.start(resource.name, ctx);
          return {};
        }
        await backend.remove(resource.name, ctx);
      }
      await backend.create(resource, hostLabels(resource), ctx);
      await backend.start(resource.name, ctx);
      return {};
    },

    async remove(key, ctx) {
      const name = containerNameOfKey(key);
      const facts = await backend.inspect(name, ctx);
      if (facts === undefined) return 'removed';
      if (!isHostContainer(facts.labels)) return 'forgotten';
      await backend.remove(name, ctx);
      return 'removed';
    },

    async keepOriginal(resource, ctx, dir) {
      const facts = await backend.inspect(resource.name, ctx);
      if (facts === undefined) return undefined;
      const file = path.join(dir, `container-${resource.name}.json`);
      // The first copy is the machine's; a later one would be the container the host made.
      if (await pathExists(file)) return `container ${resource.name}: the original was already kept at ${file}`;
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      // The whole record, environment included: it stays on this machine, readable by root only.
      await writeFileAtomic(file, `${JSON.stringify(facts.record, null, 2)}\n`);
      const state = facts.running ? 'running' : facts.status;
      return `container ${resource.name} (image ${facts.image}, ${state}) kept as its ${backend.engine} inspect record at ${file}`;
    },
  };
}

/** The container name in a `container:<name>` key, checked as a declaration would check it. */
export function containerNameOfKey(key: string): string {
  const name = key.startsWith('container:') ? key.slice('container:'.length) : undefined;
  if (name === undefined || !ContainerResource.shape.name.safeParse(name).success) {
    throw new ApplyFailed(`not a container resource key: ${JSON.stringify(key)}`);
  }
  return name;
}
