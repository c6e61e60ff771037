import { promises as fs } from 'node:fs';
import path from 'node:path';
import { runCli } from '../../e2e/run-cli';
import type { BenchContext, BenchSection } from '../bench-context';
import { failed, measured, notMeasured, type Figure, type FigureHead } from '../figure';
import { benchFiles } from '../host/bench-files';
import { HOST_FILES } from '../host/bench-files';
import { syncDisks } from '../remove-settled';
import { peakNote, runMeasured, type MeasuredRun } from '../measured-command';
import { median } from '../stats';
import { ensureHostProgram } from '../host/host-program';
import { ansiblePlaybook, cfenginePolicy, puppetManifest } from './peer-policies';
import { interleaveWithCfengine } from './versus-cfengine';

/** One tool the host is compared with. */
interface Peer {
  id: 'puppet' | 'ansible' | 'cfengine';
  /** The Debian package it comes in. */
  package: string;
  title: string;
  /** Its policy for the files under `root`, and the command applying it; `dir` is the peer's own scratch directory. */
  prepare(root: string, dir: string): Promise<{ argv: [string, ...string[]]; env?: NodeJS.ProcessEnv }>;
  /** How many times the full run applies and re-checks with it. */
  runs: number;
}

const PEERS: readonly Peer[] = [
  {
    id: 'cfengine',
    package: 'cfengine3',
    title: 'cf-agent (CFEngine 3)',
    prepare: async (root, dir) => {
      const policy = path.join(dir, 'policy.cf');
      await fs.writeFile(policy, cfenginePolicy(root, HOST_FILES), { mode: 0o600 });
      return { argv: ['cf-agent', '--no-lock', '--file', policy] };
    },
    runs: 10,
  },
  {
    id: 'puppet',
    package: 'puppet-agent',
    title: 'puppet apply (Puppet 7)',
    prepare: async (root, dir) => {
      const manifest = path.join(dir, 'bench.pp');
      await fs.writeFile(manifest, puppetManifest(root, HOST_FILES));
      const at = (name: string): string => `--${name}=${path.join(dir, name)}`;
      return { argv: ['puppet', 'apply', '--color=false', at('confdir'), at('vardir'), at('codedir'), at('logdir'), at('rundir'), manifest] };
    },
    runs: 3,
  },
  {
    id: 'ansible',
    package: 'ansible',
    title: 'ansible-playbook -c local (Ansible 7)',
    prepare: async (root, dir) => {
      const playbook = path.join(dir, 'bench.yml');
      await fs.writeFile(playbook, ansiblePlaybook(root, HOST_FILES));
      const home = path.join(dir, 'home');
      await fs.mkdir(path.join(home, 'tmp'), { recursive: true });
      return {
        argv: ['ansible-playbook', '-c', 'local', '-i', 'localhost,', playbook],
        env: { ...process.env, ANSIBLE_HOME: home, ANSIBLE_LOCAL_TEMP: path.join(home, 'tmp'), ANSIBLE_NOCOLOR: '1', ANSIBLE_PYTHON_INTERPRETER: 'auto_silent', ANSIBLE_RETRY_FILES_ENABLED: '0' },
      };
    },
    // Minutes a run: one.
    runs: 1,
  },
];

/**
 * The tools operators already use, side by side with the host on the same work: the same
 * 1,000 files (benchFiles) applied into a fresh root, then a pass that finds them right, each
 * tool as a whole process. Full run only: bench/peers/ensure-peers.sh installs what is missing
 * from Debian's packages first; the quick run never installs anything.
 */
export const peersSection: BenchSection = {
  name: 'peers',
  async run(ctx) {
    const heads = [...PEERS.flatMap((peer) => [headOf(peer, 'apply'), headOf(peer, 'noop')]), ...versusHeads()];
    if (ctx.mode === 'quick') return heads.map((head) => notMeasured(head, 'full run only: the peers are installed (bench/peers/ensure-peers.sh) and run in the full run'));
    ctx.say('peers: bench/peers/ensure-peers.sh (apt-get, only what is missing)');
    const ensured = await runCli(['sh', path.join(__dirname, 'ensure-peers.sh')], { cwd: ctx.workDir, timeoutMs: 900_000 });
    const unavailable = new Map<string, string>();
    for (const line of ensured.stdout.split('\n')) {
      const match = /^unavailable (\S+): (.*)$/.exec(line.trim());
      if (match !== null) unavailable.set(match[1] as string, match[2] as string);
    }
    const host = (id: string): number | undefined => ctx.earlier.find((figure) => figure.id === id)?.summary?.median;
    const figures: Figure[] = [];
    for (const peer of PEERS) {
      const apply = headOf(peer, 'apply');
      const noop = headOf(peer, 'noop');
      const why = unavailable.get(peer.package);
      if (why !== undefined) {
        figures.push(notMeasured(apply, `not available in this Debian: ${peer.package}: ${why}`), notMeasured(noop, `not available in this Debian: ${peer.package}`));
        continue;
      }
      try {
        const runs = peer.runs;
        ctx.say(`peers: ${peer.title}, ${runs} run${runs === 1 ? '' : 's'} of apply and no-op`);
        const { applied, again } = await measurePeer(ctx, peer, runs);
        const versus = (hostId: string, mine: MeasuredRun[]): string => {
          const hostMs = host(hostId);
          if (hostMs === undefined) return '';
          const ratio = median(mine.map((run) => run.ms)) / hostMs;
          return `; the bundled host's median is ${Math.round(hostMs)} ms, this tool takes ${ratio.toFixed(2)}× that`;
        };
        figures.push(
          measured(apply, applied.map((run) => run.ms), { note: `whole process, spawn to exit; ${peakNote(applied.map((run) => run.peakMb))}${versus('host.apply.bundle', applied)}` }),
          measured(noop, again.map((run) => run.ms), { note: `${peakNote(again.map((run) => run.peakMb))}${versus('host.noop.bundle', again)}` }),
        );
      } catch (error) {
        figures.push(failed(apply, error), failed(noop, error));
      }
    }
    figures.push(...(unavailable.has('cfengine3') ? versusHeads().map((head) => notMeasured(head, `not available in this Debian: cfengine3: ${unavailable.get('cfengine3')}`)) : await versusCfengine(ctx)));
    return figures;
  },
};

/** How many times the host and cf-agent alternate in the full run. */
const VERSUS_RUNS = 10;

function versusHeads(): [FigureHead, FigureHead] {
  return [
    { id: 'peers.versus-cfengine.host', group: 'peers', label: `the host and cf-agent alternated: the host's apply of ${HOST_FILES} files`, unit: 'ms' },
    { id: 'peers.versus-cfengine.cfengine', group: 'peers', label: `the host and cf-agent alternated: cf-agent's apply of ${HOST_FILES} files`, unit: 'ms' },
  ];
}

/**
 * The host's apply and cf-agent's, alternated run by run on fresh roots (versus-cfengine.ts):
 * on a shared machine only figures of the same run compare, so the host's goal is cf-agent's
 * median in this same run.
 */
async function versusCfengine(ctx: BenchContext): Promise<Figure[]> {
  const [hostHead, cfHead] = versusHeads();
  try {
    const program = await ensureHostProgram(ctx.repoDir, ctx.say);
    const workDir = path.join(ctx.workDir, 'versus-cfengine');
    await fs.mkdir(workDir);
    ctx.say(`peers: the host (${program.kind}) and cf-agent alternated, ${VERSUS_RUNS} runs each`);
    const { host, cf, hostUserMs, cfUserMs } = await interleaveWithCfengine(VERSUS_RUNS, program.argv, workDir, ctx.say);
    const ratio = median(host) / median(cf);
    const userOf = (runs: number[]) => (runs.length === 0 ? '' : `; user CPU ${Math.round(median(runs))} ms (median)`);
    const goal = { text: `≤ cf-agent's median in the same run (${Math.round(median(cf))} ms)`, max: median(cf), on: 'median' as const };
    return [
      measured(hostHead, host, { goal, note: `measured: ${program.what}; whole process, alternated with cf-agent on fresh roots; host / cf-agent ${ratio.toFixed(2)}×${userOf(hostUserMs)}; the host syncs every file before its rename, cf-agent syncs nothing (bench/README.md)` }),
      measured(cfHead, cf, { note: `cf-agent --no-lock, alternated with the host (${program.kind}); host / cf-agent ${ratio.toFixed(2)}×${userOf(cfUserMs)}` }),
    ];
  } catch (error) {
    return [failed(hostHead, error), failed(cfHead, error)];
  }
}

function headOf(peer: Peer, what: 'apply' | 'noop'): FigureHead {
  return {
    id: `peers.${peer.id}.${what}`,
    group: 'peers',
    label: what === 'apply' ? `${peer.title}: apply ${HOST_FILES} files` : `${peer.title}: no-op pass over them`,
    unit: 'ms',
  };
}

/** `runs` times: a fresh root, the tool applying the files (checked), then again (checked unchanged). */
async function measurePeer(ctx: BenchContext, peer: Peer, runs: number): Promise<{ applied: MeasuredRun[]; again: MeasuredRun[] }> {
  const applied: MeasuredRun[] = [];
  const again: MeasuredRun[] = [];
  for (let run = 0; run < runs; run += 1) {
    // A fresh tree each run, all kept until the section ends, as the host's (bench/remove-settled.ts).
    const dir = path.join(ctx.workDir, `${peer.id}-${run}`);
    const root = path.join(dir, 'root');
    // Every tool finds the root's /srv there: Puppet, unlike the others, makes no parents.
    await fs.mkdir(path.join(root, 'srv'), { recursive: true });
    const { argv, env } = await peer.prepare(root, dir);
    await syncDisks();
    const first = await runMeasured(argv, { cwd: dir, timeoutMs: 1_800_000, ...(env === undefined ? {} : { env }) });
    check(peer, first);
    const written = await filesState(root);
    const second = await runMeasured(argv, { cwd: dir, timeoutMs: 1_800_000, ...(env === undefined ? {} : { env }) });
    check(peer, second);
    if (JSON.stringify(await filesState(root)) !== JSON.stringify(written)) throw new Error(`${peer.title} changed files on its second pass`);
    applied.push(first);
    again.push(second);
  }
  return { applied, again };
}

function check(peer: Peer, run: MeasuredRun): void {
  if (run.result.code !== 0) {
    throw new Error(`${peer.title} exited ${run.result.code ?? run.result.signal}: ${(run.result.stderr || run.result.stdout).trim().split('\n').slice(-2).join(' / ')}`);
  }
}

/** Every file's content, mode and modification time: proves a tool wrote them all, right, and that a no-op pass left them be. */
async function filesState(root: string): Promise<string[]> {
  const files = benchFiles(HOST_FILES);
  return Promise.all(files.map(async (file) => {
    const where = path.join(root, file.path);
    const [text, stat] = await Promise.all([fs.readFile(where, 'utf8'), fs.stat(where, { bigint: true })]);
    if (text !== file.text) throw new Error(`${where} holds ${JSON.stringify(text)}, not ${JSON.stringify(file.text)}`);
    if ((Number(stat.mode) & 0o777) !== 0o644) throw new Error(`${where} has mode ${(Number(stat.mode) & 0o777).toString(8)}, not 644`);
    return `${file.path} ${stat.mtimeNs}`;
  }));
}
