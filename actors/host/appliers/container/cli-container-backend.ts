import * as z from 'zod';
import type { ContainerResource } from '../../../../schema/resource';
import type { RunResult } from '../../../shared/process/command-runner';
import { describeFailure, succeeded } from '../../../shared/process/command-runner';
import type { ApplyContext } from '../applier';
import { ApplyFailed } from '../applier';
import type { ContainerBackend, ContainerFacts, ContainerPort, ContainerVolume } from './container-backend';

/** How long asking, starting or removing one container may take; creating may pull, and is not bounded. */
export const CONTAINER_COMMAND_TIMEOUT_MS = 120_000;

// The part of `<engine> container inspect` the applier reads. Docker and Podman write the same
// Docker-compatible record; Podman leaves some fields empty where Docker writes a default.
const InspectRecord = z.looseObject({
  Name: z.string(),
  ImageName: z.string().optional(),
  State: z.looseObject({ Status: z.string().optional(), Running: z.boolean(), Restarting: z.boolean().optional() }),
  Config: z.looseObject({
    Image: z.string(),
    Cmd: z.array(z.string()).nullish(),
    Env: z.array(z.string()).nullish(),
    Labels: z.record(z.string(), z.string()).nullish(),
  }),
  HostConfig: z.looseObject({
    PortBindings: z.record(z.string(), z.array(z.looseObject({ HostIp: z.string().optional(), HostPort: z.string().optional() })).nullable()).nullish(),
    RestartPolicy: z.looseObject({ Name: z.string().optional() }).nullish(),
  }),
  Mounts: z
    .array(z.looseObject({ Type: z.string(), Name: z.string().optional(), Source: z.string().optional(), Destination: z.string(), RW: z.boolean() }))
    .nullish(),
});

/**
 * A container backend over a Docker-compatible command line (`docker`, `podman`): one
 * implementation, the program's name as its parameter. Every container it creates carries the
 * labels the applier passes (owner and declaration digest); it removes with `rm --force`.
 */
export function cliContainerBackend(engine: string, program: string = engine): ContainerBackend {
  // `null` is no time limit at all.
  const run = (ctx: ApplyContext, args: readonly string[], timeoutMs: number | null = CONTAINER_COMMAND_TIMEOUT_MS): Promise<RunResult> =>
    ctx.runner.run([program, ...args], {
      ...(timeoutMs === null ? {} : { timeoutMs }),
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    });
  const mustRun = async (ctx: ApplyContext, args: readonly string[], timeoutMs?: number | null): Promise<void> => {
    const result = await run(ctx, args, timeoutMs);
    if (!succeeded(result)) throw new ApplyFailed(describeFailure(result));
  };

  return {
    engine,

    async inspect(name, ctx) {
      const result = await run(ctx, ['container', 'inspect', name]);
      if (!succeeded(result)) {
        if (result.code !== null && /no such container/i.test(result.stderr)) return undefined;
        throw new ApplyFailed(describeFailure(result));
      }
      return factsFromInspect(result.stdout, engine);
    },

    async create(resource, labels, ctx) {
      // Creating pulls a missing image, which takes as long as it takes; the apply's signal still ends it.
      await mustRun(ctx, createArguments(resource, labels), null);
    },

    async start(name, ctx) {
      await mustRun(ctx, ['start', name]);
    },

    async remove(name, ctx) {
      await mustRun(ctx, ['rm', '--force', name]);
    },
  };
}

/** The arguments after the program that create `resource` with `labels`. */
export function createArguments(resource: ContainerResource, labels: Record<string, string>): string[] {
  const args = ['create', '--name', resource.name];
  for (const [key, value] of Object.entries(labels).sort(byKey)) args.push('--label', `${key}=${value}`);
  args.push('--restart', resource.restart);
  for (const [key, value] of Object.entries(resource.env).sort(byKey)) args.push('--env', `${key}=${value}`);
  for (const port of resource.ports) args.push('--publish', publishSpec(port));
  for (const volume of resource.volumes) args.push('--volume', volumeSpec(volume));
  // The image is the first word that is not an option; everything after it is the command.
  args.push(resource.image, ...(resource.command ?? []));
  return args;
}

/** `[address:]host:container/protocol`, an IPv6 address in brackets. */
export function publishSpec(port: ContainerPort): string {
  const address = port.address === undefined ? '' : `${port.address.includes(':') ? `[${port.address}]` : port.address}:`;
  return `${address}${port.host}:${port.container}/${port.protocol}`;
}

/** `source:target[:ro]`. A path with `:` cannot be said this way, so it is refused rather than misread. */
export function volumeSpec(volume: ContainerVolume): string {
  for (const part of [volume.source, volume.target]) {
    if (part.includes(':')) throw new ApplyFailed(`a volume path containing ":" cannot be passed to the engine: ${JSON.stringify(part)}`);
  }
  return `${volume.source}:${volume.target}${volume.read_only ? ':ro' : ''}`;
}

/** Reads the first record of an inspect output into the declaration's terms. */
export function factsFromInspect(stdout: string, engine: string): ContainerFacts {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch (error) {
    throw new ApplyFailed(`${engine} container inspect did not print JSON`, { cause: error });
  }
  const record = Array.isArray(parsed) ? parsed[0] : parsed;
  const checked = InspectRecord.safeParse(record);
  if (!checked.success) {
    throw new ApplyFailed(`${engine} container inspect printed a record this host cannot read: ${checked.error.issues[0]?.path.join('.')}`);
  }
  const inspect = checked.data;
  const env: Record<string, string> = {};
  for (const entry of inspect.Config.Env ?? []) {
    const equals = entry.indexOf('=');
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  const ports: ContainerPort[] = [];
  for (const [key, bindings] of Object.entries(inspect.HostConfig.PortBindings ?? {})) {
    const [container, protocol = 'tcp'] = key.split('/');
    for (const binding of bindings ?? []) {
      const address = binding.HostIp === undefined || binding.HostIp === '' || binding.HostIp === '0.0.0.0' ? undefined : binding.HostIp;
      ports.push({
        host: Number(binding.HostPort === undefined || binding.HostPort === '' ? 0 : binding.HostPort),
        container: Number(container),
        protocol: protocol === 'udp' ? 'udp' : 'tcp',
        ...(address === undefined ? {} : { address }),
      });
    }
  }
  const volumes: ContainerVolume[] = [];
  for (const mount of inspect.Mounts ?? []) {
    const source = mount.Type === 'volume' ? mount.Name : mount.Type === 'bind' ? mount.Source : undefined;
    if (source !== undefined) volumes.push({ source, target: mount.Destination, read_only: !mount.RW });
  }
  const restarting = inspect.State.Restarting === true;
  return {
    name: inspect.Name.replace(/^\//, ''),
    image: inspect.Config.Image || (inspect.ImageName ?? ''),
    command: inspect.Config.Cmd ?? [],
    env,
    ports,
    volumes,
    restart: inspect.HostConfig.RestartPolicy?.Name || 'no',
    running: inspect.State.Running && !restarting,
    status: restarting ? 'restarting' : inspect.State.Status ?? (inspect.State.Running ? 'running' : 'exited'),
    labels: inspect.Config.Labels ?? {},
    record,
  };
}

function byKey([a]: [string, string], [b]: [string, string]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
