import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/** What a command run in the lab said. */
export interface LabResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One machine of the lab: its network namespace, its underlay address, and the process holding its mount namespace. */
export interface LabMachine {
  name: string;
  netns: string;
  address: string;
  /** The pid of the holder whose namespaces (network and a private mount namespace) the machine's commands enter. */
  holder: number;
}

/**
 * Whether this machine lets a test make network namespaces, veth pairs and bridges (root, and a
 * kernel and container that allow them), and why not when it does not.
 */
export function namespaceSupport(): { ok: true } | { ok: false; why: string } {
  const name = `mxprobe${randomBytes(3).toString('hex')}`;
  const add = spawnSync('ip', ['netns', 'add', name], { encoding: 'utf8' });
  if (add.error !== undefined || add.status !== 0) return { ok: false, why: `\`ip netns add\` failed: ${add.error?.message ?? add.stderr.trim()}` };
  spawnSync('ip', ['netns', 'del', name]);
  const tools = ['wg', 'wg-quick', 'wireguard-go', 'nsenter', 'unshare'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  if (tools.length > 0) return { ok: false, why: `missing ${tools.join(', ')} (install wireguard-tools, wireguard-go and util-linux)` };
  return { ok: true };
}

/**
 * A few machines on one wire, made of real kernel parts: a bridge in the root namespace with an
 * address (where a broker can listen), and per machine a network namespace joined to the bridge
 * by a veth pair, its end named eth0 and given the address the lab assigns. Each machine's
 * commands run in its network namespace and in a private mount namespace kept by a holder
 * process, so wireguard-go's socket directory (/run/wireguard) is its own. Nothing else of the
 * machine's files is bound in: the configuration's PostUp names its key where its host keeps it. Names carry a random suffix so parallel runs do not meet. Everything is removed
 * by destroy(), and when the process exits should destroy() never be reached.
 */
export class NetnsLab {
  readonly suffix = randomBytes(3).toString('hex');
  readonly bridge = `mxbr${this.suffix}`;
  /** The bridge's address: the root namespace as the machines see it. */
  readonly gateway: string;
  private readonly subnet: string;
  private readonly machines = new Map<string, LabMachine>();
  private readonly children: ChildProcess[] = [];
  private destroyed = false;
  private readonly onExit = (): void => this.destroySync();

  constructor() {
    this.subnet = freeSubnet();
    this.gateway = `${this.subnet}.254`;
    process.on('exit', this.onExit);
  }

  /** Makes the bridge. */
  async create(): Promise<void> {
    await must(['ip', 'link', 'add', this.bridge, 'type', 'bridge']);
    await must(['ip', 'addr', 'add', `${this.gateway}/24`, 'dev', this.bridge]);
    await must(['ip', 'link', 'set', this.bridge, 'up']);
  }

  /** Makes machine `name` (the `index`th, from 1). */
  async addMachine(name: string, index: number): Promise<LabMachine> {
    const netns = `mx${this.suffix}-${name}`;
    const outer = `mxv${this.suffix}${index}`;
    const inner = `mxp${this.suffix}${index}`;
    const address = `${this.subnet}.${index}`;
    await must(['ip', 'netns', 'add', netns]);
    await must(['ip', 'link', 'add', outer, 'type', 'veth', 'peer', 'name', inner]);
    await must(['ip', 'link', 'set', inner, 'netns', netns]);
    await must(['ip', 'link', 'set', outer, 'master', this.bridge, 'up']);
    await must(['ip', '-n', netns, 'link', 'set', inner, 'name', 'eth0']);
    await must(['ip', '-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
    await must(['ip', '-n', netns, 'link', 'set', 'eth0', 'up']);
    await must(['ip', '-n', netns, 'link', 'set', 'lo', 'up']);
    const script = 'set -e; mkdir -p /run/wireguard; mount -t tmpfs -o mode=0700 mesh-lab /run/wireguard; echo ready; exec sleep 2147483647';
    const holder = spawn('ip', ['netns', 'exec', netns, 'unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, 'holder'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.push(holder);
    await new Promise<void>((resolve, reject) => {
      let said = '';
      holder.stdout.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (said.includes('ready')) resolve();
      });
      holder.stderr.on('data', (chunk: Buffer) => { said += chunk.toString(); });
      holder.once('exit', (code) => reject(new Error(`the namespace holder of ${name} ended (${code}): ${said}`)));
    });
    const machine: LabMachine = { name, netns, address, holder: holder.pid ?? 0 };
    this.machines.set(name, machine);
    return machine;
  }

  /** The machine called `name`. */
  machine(name: string): LabMachine {
    const machine = this.machines.get(name);
    if (machine === undefined) throw new Error(`the lab has no machine ${name}`);
    return machine;
  }

  /** The prefix that runs a command in machine `name`'s namespaces (network and mount). */
  enter(name: string): string[] {
    return ['nsenter', '-t', String(this.machine(name).holder), '-m', '-n'];
  }

  /** Runs a command in machine `name`'s namespaces and says how it ended. */
  run(name: string, argv: readonly string[], timeoutMs = 30_000): Promise<LabResult> {
    return run([...this.enter(name), ...argv], timeoutMs);
  }

  /** Starts a long-running command in machine `name`'s namespaces; destroy() ends it with the rest. */
  start(name: string, argv: readonly string[]): ChildProcess {
    const [program, ...args] = [...this.enter(name), ...argv] as [string, ...string[]];
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.push(child);
    return child;
  }

  /**
   * Ends every process in the lab's namespaces (each was started by the lab or by what it
   * started: the hosts, wireguard-go, servers), then removes the namespaces and the bridge.
   */
  async destroy(): Promise<void> {
    this.destroySync();
  }

  private destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    process.off('exit', this.onExit);
    for (const machine of this.machines.values()) {
      const pids = spawnSync('ip', ['netns', 'pids', machine.netns], { encoding: 'utf8' }).stdout.split(/\s+/).filter((pid) => /^\d+$/.test(pid));
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone between the list and the kill.
        }
      }
    }
    for (const child of this.children) child.kill('SIGKILL');
    for (const machine of this.machines.values()) spawnSync('ip', ['netns', 'del', machine.netns]);
    spawnSync('ip', ['link', 'del', this.bridge]);
  }
}

/** Runs a command and says how it ended; never throws for a failing command. */
export function run(argv: readonly string[], timeoutMs = 30_000): Promise<LabResult> {
  return new Promise((resolve) => {
    const [program, ...args] = argv as [string, ...string[]];
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.once('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function must(argv: readonly string[]): Promise<string> {
  const result = await run(argv);
  if (result.code !== 0) throw new Error(`${argv.join(' ')} exited ${result.code}: ${result.stderr.trim()}`);
  return result.stdout;
}

// A /24 under 10.213.0.0/16 that no route of this machine already covers.
function freeSubnet(): string {
  const routes = spawnSync('ip', ['-4', 'route', 'show'], { encoding: 'utf8' }).stdout;
  for (let attempt = 0; attempt < 64; attempt += 1) {
    const third = 1 + (randomBytes(1)[0] as number) % 250;
    const subnet = `10.213.${third}`;
    if (!routes.includes(`${subnet}.`)) return subnet;
  }
  throw new Error('no free /24 under 10.213.0.0/16 for the lab');
}
