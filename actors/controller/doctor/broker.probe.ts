import type { NatsConnection } from '@nats-io/transport-node';
import { passed, ProbeCannotRun, type DoctorProbe } from './doctor-probe';

/** The broker answers: a round trip over the connection given, timed. */
export function brokerProbe(nc: () => Promise<NatsConnection>, url: string): DoctorProbe {
  return {
    name: 'broker',
    whenCannotRun: `start the broker (mesh-control broker --dir DIR) and check that ${url} is reachable from here`,
    run: async () => {
      const connection = await nc();
      if (connection.isClosed()) throw new ProbeCannotRun(`the connection to ${url} is closed`);
      const ms = await connection.rtt();
      return passed(`answers at ${url} (round trip ${Math.round(ms)} ms)`);
    },
  };
}
