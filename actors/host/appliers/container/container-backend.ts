import type { ContainerResource } from '../../../../schema/resource';
import type { ApplyContext } from '../applier';

/** A published port as the engine reports it, in the declaration's terms. */
export type ContainerPort = ContainerResource['ports'][number];
/** A mount as the engine reports it: a host path or a named volume, in the declaration's terms. */
export type ContainerVolume = ContainerResource['volumes'][number];

/**
 * What the engine says about one container, read from its inspect record and put in the
 * declaration's terms, so the applier compares like with like whatever the engine.
 */
export interface ContainerFacts {
  name: string;
  /** The image reference the container was created from, as the engine records it. */
  image: string;
  /** The command after the image (`Config.Cmd`): the declared one, or the image's default. */
  command: string[];
  /** The whole environment, the image's own variables included. */
  env: Record<string, string>;
  ports: ContainerPort[];
  volumes: ContainerVolume[];
  /** The restart policy, `no` when none. */
  restart: string;
  running: boolean;
  /** The engine's word for its state (`running`, `exited`, `restarting`). */
  status: string;
  labels: Record<string, string>;
  /** The inspect record itself, kept whole when adoption keeps the original. */
  record: unknown;
}

/**
 * One container engine, as the container applier needs it. Methods run the engine's program
 * through `ctx.runner` (so tests use a recording fake) and throw `ApplyFailed` with what the
 * engine said when it refuses.
 */
export interface ContainerBackend {
  /** The engine's name (`docker`, `podman`), for messages. */
  readonly engine: string;
  /** The container of that name, or undefined when the engine has none. */
  inspect(name: string, ctx: ApplyContext): Promise<ContainerFacts | undefined>;
  /** Creates (not starts) the container as declared, carrying `labels`. Pulls a missing image. */
  create(resource: ContainerResource, labels: Record<string, string>, ctx: ApplyContext): Promise<void>;
  start(name: string, ctx: ApplyContext): Promise<void>;
  /** Removes the container, stopping it first if it runs. */
  remove(name: string, ctx: ApplyContext): Promise<void>;
}
