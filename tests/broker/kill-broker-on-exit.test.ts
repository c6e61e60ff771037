import { spawn } from 'node:child_process';
import type { RunningBroker } from '../../actors/controller/broker/broker-process';
import { killBrokerOnExit } from './kill-broker-on-exit';

// A `sleep` stands in for nats-server: all the helper reads of a broker is its pid and whether it runs.
function sleeper(): { broker: RunningBroker; ended: Promise<NodeJS.Signals | null> } {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  const ended = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  let running = true;
  void ended.then(() => (running = false));
  const broker = {
    get pid() {
      return child.pid as number;
    },
    get running() {
      return running;
    },
  } as unknown as RunningBroker;
  return { broker, ended };
}

describe('killBrokerOnExit', () => {
  test('kills a broker still running when the test process exits', async () => {
    const { broker, ended } = sleeper();
    const before = process.listeners('exit');

    const letGo = killBrokerOnExit(broker);
    const kill = process.listeners('exit').find((listener) => !before.includes(listener));
    letGo();
    kill?.call(process, 0);

    expect(kill).toBeDefined();
    expect(await ended).toBe('SIGKILL');
  });

  test('lets go of the broker once told to, leaving no exit listener behind', () => {
    const { broker } = sleeper();
    const listeners = process.listenerCount('exit');

    const letGo = killBrokerOnExit(broker);
    expect(process.listenerCount('exit')).toBe(listeners + 1);
    letGo();

    expect(process.listenerCount('exit')).toBe(listeners);
    process.kill(broker.pid, 'SIGKILL');
  });
});
