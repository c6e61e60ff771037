/**
 * The link's figures, measured against the real host process (bin/nox-mesh-host run) over a
 * temporary root, enrolled with a real nats-server through a freeze proxy
 * (actors/shared/testing/freeze-proxy.ts), with the host's default timings. A rouse is a real
 * SIGUSR1. Each figure is timed from the measuring side: from just before the signal (or the
 * freeze) to the host's log line saying it happened.
 *
 *   - rouse on a frozen link → linked again: the connection is frozen (suspended), then roused;
 *   - rouse on a working link → answered: what a rouse that was not needed costs;
 *   - rouse on a held attempt → linked again: an attempt the network holds, roused;
 *   - frozen link, no rouse → found dead: the connection's pings go unanswered (30 s default).
 *     Frozen just after a new link, which is the slowest moment to go silent: a ping has just
 *     been answered, so the two unanswered ones take the full 30 s to be counted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../schema/host-state';
import { generateNodeIdentity, ready } from '../../actors/shared/crypto';
import { startFreezeProxy, type FreezeProxy } from '../../actors/shared/testing/freeze-proxy';
import { startTestBroker, type TestBroker } from '../../tests/broker/test-broker';
import { FakeController } from '../../actors/host/link/testing/fake-controller';
import { HostStore } from '../../actors/host/store/host-store';
import { median, percentile } from '../stats';

const REPO = path.resolve(__dirname, '..', '..');
const NODE = 'bench-link';

/** One figure: its runs in milliseconds and the goal it is held to. */
export interface LinkFigure {
  label: string;
  values: number[];
  /** The goal, on the p99 (and so on the median too). */
  goalMs: number;
}

/** A host process on a link through a freeze proxy, and what it has said. */
class LinkBench {
  private output = '';
  private constructor(
    readonly broker: TestBroker,
    readonly proxy: FreezeProxy,
    readonly controller: FakeController,
    readonly root: string,
    readonly host: ChildProcess,
  ) {
    host.stdout?.on('data', (chunk: Buffer) => { this.output += chunk.toString(); });
    host.stderr?.on('data', (chunk: Buffer) => { this.output += chunk.toString(); });
  }

  static async start(): Promise<LinkBench> {
    await ready();
    const broker = await startTestBroker({ dirPrefix: 'bench-link broker' });
    const proxy = await startFreezeProxy({ port: broker.port });
    const controller = await FakeController.start(broker);
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-link-machine-'));
    const identity = generateNodeIdentity();
    await new HostStore(path.join(root, 'var/lib/mesh-host')).save({
      ...emptyHostState(),
      identity: { node: NODE, ...identity },
      pins: { broker_url: proxy.url, broker_fingerprint: broker.fingerprint, controller_public_key: controller.key.public_key },
    });
    await controller.admitNode(NODE, identity.nkey_public);
    const env = { ...process.env };
    delete env.MESH_HOST_TIMINGS;
    const host = spawn(process.execPath, [path.join(REPO, 'bin', 'nox-mesh-host'), 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'], env });
    const bench = new LinkBench(broker, proxy, controller, root, host);
    await bench.saidAfter(0, /^linked to tls:/m, 30_000);
    return bench;
  }

  get said(): number {
    return this.output.length;
  }

  /** Resolves with `performance.now()` when the host has said `pattern` after offset `from`. */
  async saidAfter(from: number, pattern: RegExp, timeoutMs = 60_000): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (pattern.test(this.output.slice(from))) return performance.now();
      if (performance.now() > deadline) throw new Error(`the host did not say ${pattern} within ${timeoutMs} ms; it said:\n${this.output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /** What the host said after `from`. */
  since(from: number): string {
    return this.output.slice(from);
  }

  /** Waits until the host has one working connection through the proxy, and lets it settle. */
  async steady(): Promise<void> {
    const deadline = performance.now() + 30_000;
    while (!(this.proxy.open().length === 1 && !this.proxy.open()[0]!.frozen)) {
      if (performance.now() > deadline) throw new Error('the host did not settle on one working connection');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }

  async stop(): Promise<void> {
    if (this.host.exitCode === null) {
      const exited = new Promise((resolve) => this.host.once('exit', resolve));
      this.host.kill('SIGTERM');
      await exited;
    }
    await this.controller.stop();
    await this.proxy.close();
    await this.broker.stop();
    await fs.rm(this.root, { recursive: true, force: true });
  }
}

/** Rouse a frozen link `runs` times: from the signal to the host saying it linked again. */
async function rouseFrozenLink(bench: LinkBench, runs: number, progress: (line: string) => void): Promise<number[]> {
  const values: number[] = [];
  for (let run = 1; run <= runs; run += 1) {
    await bench.steady();
    const from = bench.said;
    bench.proxy.freeze();
    const started = performance.now();
    bench.host.kill('SIGUSR1');
    values.push((await bench.saidAfter(from, /^linked to tls:/m)) - started);
    // The network comes back: the broker hears the old connection is gone.
    bench.proxy.restore();
    if (run % 10 === 0) progress(`rouse on a frozen link: ${run}/${runs}`);
  }
  return values;
}

/** Rouse an attempt the network holds, `runs` times: from the signal to linked again. */
async function rouseHeldAttempt(bench: LinkBench, runs: number, progress: (line: string) => void): Promise<number[]> {
  const values: number[] = [];
  for (let run = 1; run <= runs; run += 1) {
    await bench.steady();
    // A link that has held for the settling time (10 s) counts no failures, so every run
    // starts from the first step of the backoff.
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    bench.proxy.admit('hold');
    const held = bench.proxy.nextConnection();
    const from = bench.said;
    bench.proxy.cut();
    await held;
    bench.proxy.admit('forward');
    const started = performance.now();
    bench.host.kill('SIGUSR1');
    values.push((await bench.saidAfter(from, /^linked to tls:/m)) - started);
    bench.proxy.restore();
    progress(`rouse on a held attempt: ${run}/${runs}`);
  }
  return values;
}

/** Rouse a working link `runs` times: from the signal to the host saying the link answered. */
async function rouseWorkingLink(bench: LinkBench, runs: number): Promise<number[]> {
  const values: number[] = [];
  for (let run = 1; run <= runs; run += 1) {
    await bench.steady();
    const from = bench.said;
    const started = performance.now();
    bench.host.kill('SIGUSR1');
    values.push((await bench.saidAfter(from, /^the link answered in \d+ ms; it stays$/m)) - started);
  }
  return values;
}

/** Freeze the link and do nothing, `runs` times: from the freeze to the host saying it is dead. */
async function silentDeadLink(bench: LinkBench, runs: number, progress: (line: string) => void): Promise<number[]> {
  const values: number[] = [];
  for (let run = 1; run <= runs; run += 1) {
    await bench.steady();
    const from = bench.said;
    bench.proxy.freeze();
    const started = performance.now();
    values.push((await bench.saidAfter(from, /^the connection to the broker closed: the broker stopped answering pings/m, 90_000)) - started);
    bench.proxy.restore();
    await bench.saidAfter(from, /^linked to tls:/m);
    progress(`frozen link, no rouse: ${run}/${runs} (${Math.round(values.at(-1)! / 100) / 10} s)`);
  }
  return values;
}

/** Measures every figure of the link with the host's default timings. */
export async function measureLink(options: { runs: number; heldRuns: number; deadLinkRuns: number }, progress: (line: string) => void): Promise<LinkFigure[]> {
  const bench = await LinkBench.start();
  try {
    progress('host linked; measuring');
    const frozen = await rouseFrozenLink(bench, options.runs, progress);
    const working = await rouseWorkingLink(bench, options.runs);
    const held = await rouseHeldAttempt(bench, options.heldRuns, progress);
    const dead = await silentDeadLink(bench, options.deadLinkRuns, progress);
    return [
      { label: 'rouse on a frozen link → linked again', values: frozen, goalMs: 1_000 },
      { label: 'rouse on a held attempt → linked again', values: held, goalMs: 1_000 },
      { label: 'rouse on a working link → answered', values: working, goalMs: 1_000 },
      { label: 'frozen link, no rouse → found dead', values: dead, goalMs: 30_000 },
    ];
  } finally {
    await bench.stop();
  }
}

/** The figures as a Markdown table: median (p50), p99 by nearest rank, range, runs, goal. */
export function linkTable(figures: readonly LinkFigure[]): string {
  const ms = (value: number): string => (value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`);
  const lines = [
    `link, default timings, ${os.cpus().length} cores, Node ${process.version}`,
    '',
    '| figure | p50 | p99 | min | max | runs | goal | met |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const figure of figures) {
    const p99 = percentile(figure.values, 99);
    lines.push(`| ${figure.label} | ${ms(median(figure.values))} | ${ms(p99)} | ${ms(Math.min(...figure.values))} | ${ms(Math.max(...figure.values))} | ${figure.values.length} | p99 ≤ ${ms(figure.goalMs)} | ${p99 <= figure.goalMs ? 'yes' : 'no'} |`);
  }
  return `${lines.join('\n')}\n`;
}
