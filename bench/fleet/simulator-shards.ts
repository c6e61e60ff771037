import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SigningKeyPair } from '../../actors/shared/crypto';
import { cpuSeconds } from '../proc-stat';
import type { FleetBroker, FleetMember } from './fleet-member';
import type { ShardAnswer, ShardRequest, Traffic } from './simulator-shard';

const REPO_DIR = path.resolve(__dirname, '..', '..');

/**
 * Descriptors one SimulatedHost holds: its connection, its store's lock, its root and state
 * directory (measured: 2,020 in a shard of 500), and one more for a pass in flight.
 */
const DESCRIPTORS_PER_HOST = 5;

/**
 * How many hosts one shard may run under this machine's open-file limit (a shard inherits
 * ours): 5,000 in one shard at a limit of 20,000 ended in EMFILE in the middle of a round.
 */
export function hostsPerShard(limits = readLimits()): number {
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(limits)?.[1];
  const descriptors = soft === undefined ? 1024 : soft === 'unlimited' ? 1_048_576 : Number(soft);
  return Math.max(1, Math.floor((descriptors - 256) / DESCRIPTORS_PER_HOST));
}

/** How many shards `members` hosts run in when `requested` are asked for: more if the open-file limit needs. */
export function shardCount(requested: number, members: number): number {
  return Math.max(1, Math.min(Math.max(requested, Math.ceil(members / hostsPerShard())), members));
}

function readLimits(): string {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return '';
  }
}

/** One shard process and the answers it has not been asked for yet. */
interface Shard {
  child: ChildProcess;
  members: FleetMember[];
  answers: ShardAnswer[];
  wake: (() => void) | undefined;
  exited: string | undefined;
}

/**
 * A simulated fleet spread over `count` processes (bench/fleet/simulator-shard.ts), each
 * running its share of SimulatedHosts on its own thread, as the hosts of a real fleet run on
 * machines of their own. The parent keeps the controller's side (sends and the report watch),
 * so every time is still read on one clock.
 */
export class SimulatorShards {
  private constructor(private readonly shards: Shard[]) {}

  /**
   * Forks the shards and brings each one's members up, `width` connections at a time per shard:
   * `count` of them, or as many more as the open-file limit needs (hostsPerShard).
   */
  static async start(options: {
    members: readonly FleetMember[];
    count: number;
    broker: FleetBroker;
    controller: Pick<SigningKeyPair, 'public_key'>;
    rootsDir: string;
    width: number;
  }): Promise<SimulatorShards> {
    const count = shardCount(options.count, options.members.length);
    const shards: Shard[] = Array.from({ length: count }, (_, index) => {
      const child = fork(path.join(REPO_DIR, 'scripts', 'run-ts.cjs'), [path.join(REPO_DIR, 'bench', 'fleet', 'simulator-shard.ts')], {
        cwd: REPO_DIR,
        execArgv: ['--max-old-space-size=8192', ...(process.env.SHARD_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SHARD_PROF_DIR ?? '/tmp/prof'}`] : [])],
        // Standard output is the measurement's channel: a shard's lines go to standard error.
        stdio: ['ignore', 2, 2, 'ipc'],
      });
      const shard: Shard = { child, members: options.members.filter((_, at) => at % count === index), answers: [], wake: undefined, exited: undefined };
      child.on('message', (message: ShardAnswer) => {
        shard.answers.push(message);
        shard.wake?.();
      });
      child.on('exit', (code, signal) => {
        shard.exited = `simulator shard ${index + 1} ended (${signal ?? `exit ${String(code)}`})`;
        shard.wake?.();
      });
      return shard;
    });
    const fleet = new SimulatorShards(shards);
    try {
      const started = await fleet.ask('started', (shard) => ({ type: 'start', members: shard.members, broker: options.broker, controller: options.controller, rootsDir: options.rootsDir, width: options.width }));
      fleet.rssMb = started.reduce((sum, answer) => sum + answer.rssMb, 0);
    } catch (error) {
      fleet.kill();
      throw error;
    }
    return fleet;
  }

  /** How many processes the fleet runs in. */
  get count(): number {
    return this.shards.length;
  }

  /** Resident memory of every shard together once its members were up, MB. */
  rssMb = 0;

  /** CPU time of every shard process so far, seconds. */
  cpuSeconds(): number {
    return this.shards.reduce((sum, shard) => sum + (shard.child.pid === undefined ? 0 : cpuSeconds(shard.child.pid)), 0);
  }

  /**
   * Raw round trips: one from every member at once, every shard started together (the fleet's
   * floor), or with `sequential`, that many one after another from a lone member.
   */
  async floor(payload: Uint8Array, sequential?: number): Promise<number[]> {
    const answers = await this.ask('floor', () => ({ type: 'floor', payload: Buffer.from(payload).toString('base64'), sequential }));
    return answers.flatMap((answer) => answer.times);
  }

  /** What every member's connection has sent and received so far, summed over the shards. */
  async traffic(): Promise<Traffic> {
    const answers = await this.ask('traffic', () => ({ type: 'traffic' }));
    return answers.reduce<Traffic>((sum, { traffic }) => ({
      inMsgs: sum.inMsgs + traffic.inMsgs,
      outMsgs: sum.outMsgs + traffic.outMsgs,
      inBytes: sum.inBytes + traffic.inBytes,
      outBytes: sum.outBytes + traffic.outBytes,
    }), { inMsgs: 0, outMsgs: 0, inBytes: 0, outBytes: 0 });
  }

  /** Stops every member and every shard; returns a few of the lines the members logged. */
  async stop(): Promise<string[]> {
    try {
      const answers = await this.ask('stopped', () => ({ type: 'stop' }));
      // A shard ends on its own once stopped (and writes its profile, when asked for one).
      await Promise.all(this.shards.map((shard) => this.ended(shard, 10_000)));
      return answers.flatMap((answer) => answer.notes).slice(0, 5);
    } finally {
      this.kill();
    }
  }

  /** Ends every shard at once, whatever it is doing. */
  kill(): void {
    for (const shard of this.shards) if (shard.exited === undefined) shard.child.kill('SIGKILL');
  }

  private async ended(shard: Shard, withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    while (shard.exited === undefined && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        shard.wake = resolve;
        setTimeout(resolve, 100).unref();
      });
      shard.wake = undefined;
    }
  }

  private async ask<T extends ShardAnswer['type']>(type: T, request: (shard: Shard) => ShardRequest): Promise<Array<Extract<ShardAnswer, { type: T }>>> {
    const answers = await Promise.all(this.shards.map(async (shard) => {
      shard.child.send(request(shard));
      return this.next(shard, type);
    }));
    return answers;
  }

  private async next<T extends ShardAnswer['type']>(shard: Shard, type: T): Promise<Extract<ShardAnswer, { type: T }>> {
    for (;;) {
      const answer = shard.answers.shift();
      if (answer?.type === 'failed') throw new Error(`a simulator shard failed: ${answer.error}`);
      if (answer?.type === type) return answer as Extract<ShardAnswer, { type: T }>;
      if (answer !== undefined) continue;
      if (shard.exited !== undefined) throw new Error(shard.exited);
      await new Promise<void>((resolve) => {
        shard.wake = resolve;
      });
      shard.wake = undefined;
    }
  }
}
