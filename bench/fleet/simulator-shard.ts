/**
 * A share of a simulated fleet in a process of its own, driven by its parent over the IPC
 * channel (see simulator-shards.ts): node scripts/run-ts.cjs bench/fleet/simulator-shard.ts.
 * A real fleet runs each host on a machine of its own; thousands of hosts on one JavaScript
 * thread queue behind each other, which measures the simulator rather than the mesh.
 */
import { ready, type SigningKeyPair } from '../../actors/shared/crypto';
import type { FleetBroker, FleetMember } from './fleet-member';
import { inBatches } from './fleet-member';
import { concurrentFloor, sequentialFloor } from './nats-floor';
import { SimulatedHost } from './simulated-host';

/** What the parent asks of a shard. */
export type ShardRequest =
  | { type: 'start'; members: FleetMember[]; broker: FleetBroker; controller: Pick<SigningKeyPair, 'public_key'>; rootsDir: string; width: number }
  | { type: 'floor'; payload: string; sequential: number | undefined }
  | { type: 'traffic' }
  | { type: 'stop' };

/** Messages and bytes the members' connections have sent and received so far, summed. */
export interface Traffic {
  inMsgs: number;
  outMsgs: number;
  inBytes: number;
  outBytes: number;
}

/** What a shard answers. */
export type ShardAnswer =
  | { type: 'started'; rssMb: number }
  | { type: 'floor'; times: number[] }
  | { type: 'traffic'; traffic: Traffic }
  | { type: 'stopped'; notes: string[] }
  | { type: 'failed'; error: string };

const hosts: SimulatedHost[] = [];

function answer(message: ShardAnswer): void {
  process.send?.(message);
}

async function handle(request: ShardRequest): Promise<void> {
  if (request.type === 'start') {
    await ready();
    await inBatches(request.members, request.width, async (member) => {
      hosts.push(await SimulatedHost.start(member, request.broker, request.controller, request.rootsDir));
      if (hosts.length % 1000 === 0) process.stderr.write(`simulator shard ${process.pid}: ${hosts.length} of ${request.members.length} hosts up\n`);
    });
    answer({ type: 'started', rssMb: process.memoryUsage().rss / 2 ** 20 });
  } else if (request.type === 'floor') {
    const payload = new Uint8Array(Buffer.from(request.payload, 'base64'));
    const first = hosts[0];
    const times = request.sequential !== undefined && first !== undefined
      ? await sequentialFloor(first.member.name, first.connection, request.sequential, payload)
      : await concurrentFloor(hosts.map((host) => ({ name: host.member.name, connection: host.connection })), payload);
    answer({ type: 'floor', times });
  } else if (request.type === 'traffic') {
    const traffic: Traffic = { inMsgs: 0, outMsgs: 0, inBytes: 0, outBytes: 0 };
    for (const host of hosts) {
      const stats = host.connection.stats();
      traffic.inMsgs += stats.inMsgs;
      traffic.outMsgs += stats.outMsgs;
      traffic.inBytes += stats.inBytes;
      traffic.outBytes += stats.outBytes;
    }
    answer({ type: 'traffic', traffic });
  } else {
    await inBatches(hosts, 64, (host) => host.stop().catch(() => undefined));
    answer({ type: 'stopped', notes: hosts.flatMap((host) => host.notes).slice(0, 5) });
    process.disconnect?.();
  }
}

process.on('message', (request: ShardRequest) => {
  handle(request).catch((error: unknown) => answer({ type: 'failed', error: (error as Error)?.stack ?? String(error) }));
});
// The parent gone (killed, or its measurement failed) leaves nothing running behind it.
process.on('disconnect', () => process.exit(0));
