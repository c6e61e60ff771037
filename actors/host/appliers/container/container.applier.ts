import path from 'node:path';
import * as fs from '../../../shared/fs/promised-fs';
import { ContainerResource } from '../../../../schema/resource';
import { writeFileAtomic } from '../../../shared/fs/atomic-write';
import type { Applier, HandBack, Observation } from '../applier';
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
 *
 * Hand-back cannot make a container again as it was (its inspect record is not a recipe: what
 * the engine was asked is lost), so it never removes the one the machine had: the container
 * found there (the same id as the one kept) is left as it is, no longer managed; one the host
 * made in its place is removed, its record of the original staying kept; anything else is left
 * alone.
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

    async handBack(key, ctx, dir): Promise<HandBack | undefined> {
      const name = containerNameOfKey(key);
      const file = path.join(dir, `container-${name}.json`);
      let text: string;
      try {
        text = await fs.readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new ApplyFailed(`could not read the record of container ${name} kept at ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      const keptId = idOf(parsedOrUndefined(text));
      const facts = await backend.inspect(name, ctx);
      const recordAt = `its ${backend.engine} inspect record stays at ${file}`;
      if (keptId === undefined) {
        // Which container is the machine's cannot be told: nothing is removed on a guess.
        return { outcome: 'forgotten', what: `left container ${name} as it is: the record of the original kept at ${file} holds no container id, so the host cannot tell whether it is the machine's` };
      }
      if (facts === undefined) {
        return { outcome: 'forgotten', what: `no container ${name} is there any more, so there is nothing to hand back; the machine's original was ${shortId(keptId)}, ${recordAt}` };
      }
      const id = idOf(facts.record);
      if (id === keptId) {
        await fs.rm(file, { force: true });
        const state = facts.running ? 'running' : facts.status;
        return { outcome: 'handed_back', what: `left in place as it was found: container ${name} (${shortId(id)}, image ${facts.image}, ${state}) is the machine's own again, no longer managed by the host` };
      }
      if (isHostContainer(facts.labels)) {
        await backend.remove(name, ctx);
        return {
          outcome: 'removed',
          what: `removed container ${name}, which the host made in place of the machine's original (${shortId(keptId)}); the host cannot make that one again as it was: ${recordAt}`,
        };
      }
      return { outcome: 'forgotten', what: `left container ${name} in place: it is neither the machine's original (${shortId(keptId)}) nor one the host made; ${recordAt}` };
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

/** The container id in an inspect record (`Id`, both engines), when it has one. */
function idOf(record: unknown): string | undefined {
  const id = typeof record === 'object' && record !== null ? (record as { Id?: unknown }).Id : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// As the engines show it: the first twelve characters.
function shortId(id: string): string {
  return `id ${id.slice(0, 12)}`;
}
