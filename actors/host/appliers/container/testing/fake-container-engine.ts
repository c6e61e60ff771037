import type { CommandRunner, RunOptions, RunResult } from '../../../../shared/process/command-runner';
import { normalizeImageReference } from '../image-reference';

/** One container as the fake engine holds it. */
export interface FakeContainer {
  id: string;
  name: string;
  /** The reference it was created from, as given. */
  image: string;
  /** `Config.Cmd`: the command given, or the fake image's default. */
  command: string[];
  /** `KEY=VALUE` entries, the image's own first. */
  env: string[];
  labels: Record<string, string>;
  /** `[address:]host:container/protocol` as given to --publish. */
  publish: string[];
  /** `source:target[:ro]` as given to --volume. */
  volumes: string[];
  restart: string;
  running: boolean;
  /** How it ended, for `State.Status`. */
  status: 'created' | 'running' | 'exited';
}

/** What a person might have created by hand, without the host. */
export type HandMadeContainer = Partial<Omit<FakeContainer, 'id' | 'status'>> & { name: string; image: string };

// What every fake image brings: a PATH, and a default command.
const IMAGE_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'];
const IMAGE_COMMAND = ['/docker-entrypoint.sh'];

/**
 * A FAKE container engine for tests (no engine runs here). It understands the few commands
 * the CLI container backend sends — `container inspect`, `create`, `start`, `rm --force` —
 * keeps containers in memory, writes inspect records the way the named engine does (Docker:
 * `/name`, the image reference as given, restart `no`; Podman: bare name, the reference in
 * full, restart `""` for none, `container=podman` in the environment), answers what it does
 * not understand with the engine's "unknown flag" error, and records every argv in `calls`.
 */
export class FakeContainerEngine implements CommandRunner {
  /** Every command asked of the fake, in order. */
  readonly calls: string[][] = [];
  /** When set, every command fails as an engine whose daemon is not running. */
  down = false;
  private readonly containers = new Map<string, FakeContainer>();
  private nextId = 1;

  constructor(readonly program: 'docker' | 'podman') {}

  /** The container as the fake now holds it. */
  container(name: string): FakeContainer | undefined {
    const found = this.containers.get(name);
    return found === undefined ? undefined : structuredClone(found);
  }

  /** Someone ran `docker stop NAME` by hand. */
  stopByHand(name: string): void {
    const found = this.containers.get(name);
    if (found !== undefined) Object.assign(found, { running: false, status: 'exited' });
  }

  /** Someone created (and started) a container by hand: no labels unless given. */
  createByHand(container: HandMadeContainer): FakeContainer {
    const made: FakeContainer = {
      id: this.newId(),
      command: IMAGE_COMMAND,
      labels: {},
      publish: [],
      volumes: [],
      restart: 'no',
      running: true,
      ...container,
      env: [...IMAGE_ENV, ...(container.env ?? [])],
      status: container.running === false ? 'exited' : 'running',
    };
    this.containers.set(made.name, made);
    return structuredClone(made);
  }

  async run(argv: readonly string[], _options?: RunOptions): Promise<RunResult> {
    this.calls.push([...argv]);
    const [program, ...args] = argv;
    if (program !== this.program) return result(argv, 127, '', `${program}: not found (the fake engine is ${this.program})`);
    if (this.down) {
      return result(argv, this.program === 'docker' ? 1 : 125, '', this.program === 'docker'
        ? 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n'
        : 'Error: unable to connect to Podman socket: connection refused\n');
    }
    const [verb, ...rest] = args;
    if (verb === 'container' && rest[0] === 'inspect' && rest.length === 2) return this.inspect(argv, rest[1] as string);
    if (verb === 'create') return this.create(argv, rest);
    if (verb === 'start' && rest.length === 1) return this.start(argv, rest[0] as string);
    if (verb === 'rm' && rest[0] === '--force' && rest.length === 2) {
      this.containers.delete(rest[1] as string);
      return result(argv, 0, `${rest[1]}\n`);
    }
    return result(argv, 125, '', `Error: the fake ${this.program} does not understand: ${args.join(' ')}\n`);
  }

  private newId(): string {
    return (this.nextId++).toString(16).padStart(64, '0');
  }

  private noSuch(argv: readonly string[], name: string): RunResult {
    return this.program === 'docker'
      ? result(argv, 1, '', `Error response from daemon: No such container: ${name}\n`)
      : result(argv, 125, '', `Error: no such container ${name}\n`);
  }

  private inspect(argv: readonly string[], name: string): RunResult {
    const found = this.containers.get(name);
    if (found === undefined) {
      // `container inspect` prints an empty list beside the error.
      return { ...this.noSuch(argv, name), stdout: '[]\n' };
    }
    return result(argv, 0, `${JSON.stringify([this.record(found)], null, 4)}\n`);
  }

  private record(container: FakeContainer): unknown {
    const podman = this.program === 'podman';
    const portBindings: Record<string, { HostIp: string; HostPort: string }[]> = {};
    for (const spec of container.publish) {
      const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d+):(\d+)\/(tcp|udp)$/.exec(spec);
      if (match === null) continue;
      const [, address = '', host = '', inside = '', protocol = 'tcp'] = match;
      (portBindings[`${inside}/${protocol}`] ??= []).push({ HostIp: address.replace(/^\[|\]$/g, ''), HostPort: host });
    }
    const mounts = container.volumes.map((spec) => {
      const [source = '', target = '', options = ''] = spec.split(':');
      const named = !source.startsWith('/');
      return {
        Type: named ? 'volume' : 'bind',
        ...(named ? { Name: source } : {}),
        Source: named ? `/var/lib/${podman ? 'containers/storage' : 'docker'}/volumes/${source}/_data` : source,
        Destination: target,
        RW: options !== 'ro',
        Propagation: named ? '' : 'rprivate',
      };
    });
    const image = podman ? normalizeImageReference(container.image) : container.image;
    return {
      Id: container.id,
      Name: podman ? container.name : `/${container.name}`,
      ...(podman ? { ImageName: image } : {}),
      State: { Status: container.status, Running: container.running, Restarting: false },
      Config: {
        Image: image,
        Cmd: container.command,
        Env: podman ? [...container.env, 'container=podman', `HOSTNAME=${container.id.slice(-12)}`] : container.env,
        Labels: container.labels,
      },
      HostConfig: {
        PortBindings: portBindings,
        RestartPolicy: { Name: podman && container.restart === 'no' ? '' : container.restart, MaximumRetryCount: 0 },
      },
      Mounts: mounts,
    };
  }

  private create(argv: readonly string[], args: string[]): RunResult {
    const made: Omit<FakeContainer, 'image' | 'name'> & { name?: string } = {
      id: this.newId(), command: IMAGE_COMMAND, env: [...IMAGE_ENV], labels: {}, publish: [], volumes: [], restart: 'no', running: false, status: 'created',
    };
    let i = 0;
    for (; i < args.length; i += 2) {
      const [flag, value] = [args[i] as string, args[i + 1]];
      if (!flag.startsWith('-')) break;
      if (value === undefined) return result(argv, 125, '', `Error: flag needs an argument: ${flag}\n`);
      switch (flag) {
        case '--name': made.name = value; break;
        case '--label': { const eq = value.indexOf('='); made.labels[value.slice(0, eq)] = value.slice(eq + 1); break; }
        case '--restart': made.restart = value; break;
        case '--env': made.env.push(value); break;
        case '--publish': made.publish.push(value); break;
        case '--volume': made.volumes.push(value); break;
        default: return result(argv, 125, '', `Error: unknown flag: ${flag}\n`);
      }
    }
    const [image, ...command] = args.slice(i);
    if (image === undefined || made.name === undefined) return result(argv, 125, '', 'Error: requires at least 1 arg(s)\n');
    if (this.containers.has(made.name)) {
      return result(argv, 125, '', `Error: the container name "${made.name}" is already in use\n`);
    }
    this.containers.set(made.name, { ...made, name: made.name, image, ...(command.length > 0 ? { command } : {}) });
    return result(argv, 0, `${made.id}\n`);
  }

  private start(argv: readonly string[], name: string): RunResult {
    const found = this.containers.get(name);
    if (found === undefined) return this.noSuch(argv, name);
    Object.assign(found, { running: true, status: 'running' });
    return result(argv, 0, `${name}\n`);
  }
}

function result(argv: readonly string[], code: number, stdout: string, stderr = ''): RunResult {
  return { argv, code, signal: null, stdout, stderr, timedOut: false, durationMs: 0 };
}
