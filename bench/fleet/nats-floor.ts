import type { NatsConnection } from '@nats-io/transport-node';
import { nodeConsumerSubjects } from '../../actors/controller/broker/permissions';

/**
 * One raw request/reply round trip from a node's connection into the controller's account and
 * back, in ms: the node asks for its consumer's info, which the broker's JetStream answers
 * through the account import (a node cannot reach a controller's subscriber by request, only by
 * service import, and the mesh exports none but JetStream's). Nothing of the project runs on
 * either side, so it is what the broker, the account hop and the client library cost here. The
 * payload is sent as it is; JetStream ignores it.
 */
export async function floorRoundTrip(node: string, connection: NatsConnection, payload: Uint8Array): Promise<number> {
  const started = performance.now();
  await connection.request(nodeConsumerSubjects(node).info, payload, { timeout: 60_000 });
  return performance.now() - started;
}

/** `count` round trips one after another from one connection: the floor of a single node's figure. */
export async function sequentialFloor(node: string, connection: NatsConnection, count: number, payload: Uint8Array): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) times.push(await floorRoundTrip(node, connection, payload));
  return times;
}

/** One round trip from every connection at once: the floor of a fleet-wide figure at that size. */
export function concurrentFloor(nodes: ReadonlyArray<{ name: string; connection: NatsConnection }>, payload: Uint8Array): Promise<number[]> {
  return Promise.all(nodes.map((node) => floorRoundTrip(node.name, node.connection, payload)));
}

/**
 * `count` round trips one after another through the broker on one connection that both asks
 * and answers (`mesh.bench.floor`, under the controller's own subjects): the floor on a mesh
 * whose nodes are real processes, where no node connection is the benchmark's to use.
 */
export async function selfFloor(connection: NatsConnection, count: number, payload: Uint8Array): Promise<number[]> {
  const subject = 'mesh.bench.floor';
  const answer = connection.subscribe(subject, {
    callback: (error, message) => {
      if (error === null) message.respond(message.data);
    },
  });
  try {
    await connection.flush();
    const times: number[] = [];
    for (let index = 0; index < count; index += 1) {
      const started = performance.now();
      await connection.request(subject, payload, { timeout: 10_000 });
      times.push(performance.now() - started);
    }
    return times;
  } finally {
    answer.unsubscribe();
  }
}
