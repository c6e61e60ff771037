import { promises as fs } from 'node:fs';
import path from 'node:path';
import { MeshRig } from '../../e2e/mesh-rig';
import { namespaceSupport, NetnsLab, run } from '../../e2e/netns-lab';
import { succeeded } from '../../e2e/run-cli';
import { done, notYet, until } from '../../e2e/until';
import { byMode, type BenchContext, type BenchSection } from '../bench-context';
import { failed, floorOf, measured, notMeasured, type Figure, type FigureHead } from '../figure';

const FIRST_PACKET: FigureHead = { id: 'overlay.enrol_first_packet', group: 'overlay', label: 'enrol → first packet over the overlay to every other node', unit: 'ms' };
const GONE: FigureHead = { id: 'overlay.release_gone', group: 'overlay', label: 'release → gone from every peer\'s running interface', unit: 'ms' };
const MOVED: FigureHead = { id: 'overlay.move_endpoint', group: 'overlay', label: 'a node\'s address changes (rouse) → its new endpoint in a peer\'s running interface', unit: 'ms' };
const THROUGHPUT: FigureHead = { id: 'overlay.tunnel_64mib', group: 'overlay', label: '64 MiB over one wireguard-go tunnel (floor: the raw veth)', unit: 'ms' };

const BYTES = 64 * 1024 * 1024;
const TCP_PORT = 7071;

/**
 * The overlay's costs, across real network namespaces with wireguard-go (see
 * e2e/overlay.e2e.test.ts for the rig and its one stand-in, `wg-quick up` for the init): how
 * long from `enrol` until the new node's first packets reach every other node; how long from
 * `node release` until it is gone from every peer's running interface; and what one tunnel
 * costs in throughput against the veth under it (the floor, so the ratio is the overlay's cost).
 */
export const overlaySection: BenchSection = {
  name: 'overlay',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const support = namespaceSupport();
    if (!support.ok) return [FIRST_PACKET, GONE, MOVED, THROUGHPUT].map((head) => notMeasured(head, `no network namespaces here: ${support.why}`));
    const figures: Figure[] = [];
    try {
      figures.push(await throughput(ctx));
    } catch (error) {
      figures.push(failed(THROUGHPUT, error));
    }
    try {
      figures.push(...(await churn(ctx)));
    } catch (error) {
      figures.push(failed(FIRST_PACKET, error), failed(GONE, error), failed(MOVED, error));
    }
    return figures;
  },
};

// Two namespaces with a tunnel made by hand (wg genkey, wg set): the tunnel alone, not the mesh.
async function throughput(ctx: BenchContext): Promise<Figure> {
  const lab = new NetnsLab();
  try {
    await lab.create();
    const roots = ['x', 'y'].map((name) => path.join(ctx.workDir, name));
    const machines = [];
    for (const [index, root] of roots.entries()) {
      await fs.mkdir(path.join(root, 'var', 'lib'), { recursive: true });
      machines.push(await lab.addMachine(index === 0 ? 'x' : 'y', index + 1));
    }
    const keys = await Promise.all(roots.map(async (root) => {
      const key = path.join(root, 'var', 'lib', 'wg.key');
      const secret = (await run(['wg', 'genkey'])).stdout.trim();
      await fs.writeFile(key, `${secret}\n`, { mode: 0o600 });
      const pub = (await run(['sh', '-c', 'wg pubkey < "$1"', 'pubkey', key])).stdout.trim();
      return { key, pub };
    }));
    for (const [index, machine] of machines.entries()) {
      const other = machines[1 - index];
      const otherKey = keys[1 - index];
      if (other === undefined || otherKey === undefined) throw new Error('two machines expected');
      const script = [
        'set -e',
        'wireguard-go mesh0 2>/dev/null',
        `wg set mesh0 listen-port 51820 private-key ${keys[index]?.key} peer ${otherKey.pub} endpoint ${other.address}:51820 allowed-ips 10.99.0.${2 - index}/32`,
        `ip addr add 10.99.0.${index + 1}/32 dev mesh0`,
        'ip link set mesh0 up',
        `ip route add 10.99.0.${2 - index}/32 dev mesh0`,
      ].join('\n');
      const up = await lab.run(machine.name, ['sh', '-c', script]);
      if (up.code !== 0) throw new Error(`bringing up the tunnel in ${machine.name}: ${up.stderr}`);
    }
    const sink = lab.start('y', [process.execPath, '-e', `require('net').createServer((s) => { s.resume(); s.on('end', () => s.end()); }).listen(${TCP_PORT}, () => console.log('listening'))`]);
    await new Promise<void>((resolve) => sink.stdout?.once('data', () => resolve()));
    const runs = byMode(ctx, 3, 7);
    const send = (address: string) => async (): Promise<number> => {
      const sender = `const s = require('net').connect(${TCP_PORT}, process.argv[1]); const chunk = Buffer.alloc(1 << 20); let left = ${BYTES / (1 << 20)}; const t = process.hrtime.bigint();
        const more = () => { while (left > 0) { left -= 1; if (!s.write(chunk)) return s.once('drain', more); } s.end(); }; s.on('connect', more);
        s.on('close', () => console.log(Number(process.hrtime.bigint() - t) / 1e6)); s.on('error', (e) => { console.error(e.message); process.exit(1); });`;
      const result = await lab.run('x', [process.execPath, '-e', sender, address], 120_000);
      if (result.code !== 0) throw new Error(`sending to ${address}: ${result.stderr}`);
      return Number(result.stdout.trim());
    };
    const raw: number[] = [];
    const tunnel: number[] = [];
    const rawSend = send(lab.machine('y').address);
    const tunnelSend = send('10.99.0.2');
    await tunnelSend();
    for (let i = 0; i < runs; i += 1) {
      raw.push(await rawSend());
      tunnel.push(await tunnelSend());
    }
    ctx.say(`overlay: 64 MiB raw veth ${raw.join(', ')} ms; through the tunnel ${tunnel.join(', ')} ms`);
    return measured(THROUGHPUT, tunnel, { floor: floorOf('the same 64 MiB over the raw veth', raw), note: 'userspace wireguard-go (no kernel module here); the ratio is what the overlay costs in time per byte' });
  } finally {
    await lab.destroy();
  }
}

// Three machines: a and c stay, b is enrolled and released over and over.
async function churn(ctx: BenchContext): Promise<Figure[]> {
  const lab = new NetnsLab();
  const names = ['a', 'b', 'c'];
  const rig = new MeshRig({ dir: path.join(ctx.workDir, 'mesh'), hosts: names, brokerHost: lab.gateway, hostPrefix: (name) => lab.enter(name) });
  try {
    await lab.create();
    for (const [index, name] of names.entries()) {
      const root = rig.hostRoot(name);
      await fs.mkdir(path.join(root, 'var', 'lib'), { recursive: true });
      await fs.mkdir(path.join(root, 'usr', 'bin'), { recursive: true });
      await fs.symlink('/usr/bin/wireguard-go', path.join(root, 'usr', 'bin', 'wireguard-go'));
      await lab.addMachine(name, index + 1);
    }
    await rig.start();
    const conf = (name: string): string => path.join(rig.hostRoot(name), 'etc', 'wireguard', 'mesh0.conf');
    const peersOf = async (name: string): Promise<string[]> => (await lab.run(name, ['wg', 'show', 'mesh0', 'peers'])).stdout.split('\n').filter(Boolean);
    const addressOf = async (name: string): Promise<string> => (await rig.nodes()).find((node) => node.name === name)?.address ?? '';
    const configNames = async (name: string, count: number): Promise<void> => {
      await until(`${name}'s configuration to name ${count} peers with endpoints`, async () => {
        const text = await fs.readFile(conf(name), 'utf8').catch(() => '');
        return [...text.matchAll(/^Endpoint = /gm)].length === count ? done(true) : notYet(text);
      }, { timeoutMs: 60_000, intervalMs: 50 });
    };
    for (const name of ['a', 'c']) {
      const token = await rig.issueToken({ new: true });
      await rig.enrol(name, token.token);
    }
    for (const name of ['a', 'c']) {
      await configNames(name, 1);
      const up = await lab.run(name, ['wg-quick', 'up', conf(name)]);
      if (up.code !== 0) throw new Error(`wg-quick up in ${name}: ${up.stderr}`);
    }
    const firstPacket: number[] = [];
    const gone: number[] = [];
    const runs = byMode(ctx, 2, 5);
    for (let i = 0; i < runs; i += 1) {
      const token = await rig.issueToken(i === 0 ? { new: true } : { node: 'b' });
      const started = performance.now();
      const enrolled = await rig.enrol('b', token.token);
      const enrolDone = performance.now() - started;
      await configNames('b', 2);
      const fileThere = performance.now() - started;
      // The stand-in for the init starting wg-quick@mesh0 as soon as its file is there.
      await lab.run('b', ['ip', 'link', 'del', 'mesh0']);
      const up = await lab.run('b', ['wg-quick', 'up', conf('b')]);
      if (up.code !== 0) throw new Error(`wg-quick up in b: ${up.stderr}`);
      for (const other of ['a', 'c']) {
        const address = await addressOf(other);
        await until(`b to reach ${other}`, async () => {
          const answer = await lab.run('b', ['python3', '-c', ECHO, address]);
          if (answer.code === 0) return done(true);
          const shown = await Promise.all(['b', other].map(async (name) => `${name}: ${(await lab.run(name, ['wg', 'show', 'mesh0'])).stdout} ${(await lab.run(name, ['ip', 'route'])).stdout}`));
          return notYet(`${answer.stderr} ${shown.join(' | ')}`.replace(/\s+/g, ' '));
        }, { timeoutMs: 60_000, intervalMs: 20 });
      }
      firstPacket.push(performance.now() - started);
      const releasing = performance.now();
      succeeded(await rig.control(['node', 'release', 'b']));
      for (const other of ['a', 'c']) {
        await until(`${other} to drop b`, async () => ((await peersOf(other)).includes(enrolled.wireguard_public_key) ? notYet('still there') : done(true)), { timeoutMs: 60_000, intervalMs: 20 });
      }
      gone.push(performance.now() - releasing);
      ctx.say(`overlay: run ${i + 1}: enrol returned at ${Math.round(enrolDone)} ms, its file there at ${Math.round(fileThere)} ms, first packet to both at ${Math.round(firstPacket.at(-1) ?? 0)} ms; gone from both ${Math.round(gone.at(-1) ?? 0)} ms after release`);
    }
    const note = 'three namespaces on one bridge, wireguard-go; the init is stood in for by `wg-quick up` run as soon as the file is there';

    // a moves to another address, and its host is roused as the network dispatcher rouses it on
    // a real machine: its dead link ends, the new one's first heartbeat carries the addresses,
    // the controller sends c the change, and c's sync action makes it live.
    const moved: number[] = [];
    const pidFile = path.join(rig.hostStateDir('a'), 'host.pid');
    for (let i = 0; i < runs; i += 1) {
      const from = (await fs.readFile(conf('c'), 'utf8')).match(/^Endpoint = (\S+):\d+$/m)?.[1] ?? lab.machine('a').address;
      const to = from.replace(/\.\d+$/, `.${41 + i}`);
      const started = performance.now();
      const move = await lab.run('a', ['sh', '-c', 'ip addr del "$1/24" dev eth0 && ip addr add "$2/24" dev eth0', 'move', from, to]);
      if (move.code !== 0) throw new Error(`moving a from ${from} to ${to}: ${move.stderr}`);
      process.kill(Number((await fs.readFile(pidFile, 'utf8')).trim()), 'SIGUSR1');
      await until(`c's running interface to send to a at ${to}`, async () => {
        const endpoints = (await lab.run('c', ['wg', 'show', 'mesh0', 'endpoints'])).stdout;
        const text = await fs.readFile(conf('c'), 'utf8');
        return endpoints.includes(`${to}:`) && text.includes(`Endpoint = ${to}:`) ? done(true) : notYet(endpoints);
      }, { timeoutMs: 120_000, intervalMs: 20 });
      moved.push(performance.now() - started);
      ctx.say(`overlay: move ${i + 1}: a from ${from} to ${to}, in c's running interface after ${Math.round(moved.at(-1) ?? 0)} ms`);
    }
    const moveNote = 'a rouse (SIGUSR1, as the network dispatcher sends) after the address change; default host timings';
    return [measured(FIRST_PACKET, firstPacket, { note }), measured(GONE, gone, { note }), measured(MOVED, moved, { note: moveNote })];
  } finally {
    await rig.stop();
    await lab.destroy();
  }
}

// One ICMP echo, as the e2e test sends it where no ping is installed.
const ECHO = `
import os, socket, struct, sys
def cs(d):
    t = sum(struct.unpack('!%dH' % (len(d) // 2), d)); t = (t >> 16) + (t & 0xffff); return ~(t + (t >> 16)) & 0xffff
i = os.getpid() & 0xffff; b = b'mesh-overlay-bench'
p = struct.pack('!BBHHH', 8, 0, cs(struct.pack('!BBHHH', 8, 0, 0, i, 1) + b), i, 1) + b
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); s.settimeout(1); s.sendto(p, (sys.argv[1], 0))
try:
    while True:
        r, a = s.recvfrom(1024); o = (r[0] & 0x0f) * 4
        if r[o] == 0 and struct.unpack('!H', r[o + 4:o + 6])[0] == i and a[0] == sys.argv[1]: sys.exit(0)
except socket.timeout:
    sys.exit(1)
`;
