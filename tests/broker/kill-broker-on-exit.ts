import type { RunningBroker } from '../../actors/controller/broker/broker-process';

/**
 * Kills a test's broker if the test process exits while it still runs, so a test file that ends
 * before its `afterAll` leaves no nats-server behind. Returns the function that lets go of it;
 * call that once the broker has been stopped.
 */
export function killBrokerOnExit(broker: RunningBroker): () => void {
  const kill = (): void => {
    if (broker.running) process.kill(broker.pid, 'SIGKILL');
  };
  process.once('exit', kill);
  return () => {
    process.off('exit', kill);
  };
}
