import { EventEmitter } from 'node:events';
import { signalRouses } from './rouse-signal';

describe('rouses by signal', () => {
  test('each SIGUSR1 is a rouse while someone listens, and none once they stop', () => {
    const processLike = new EventEmitter();
    const heard: string[] = [];
    const stop = signalRouses(processLike).listen(() => heard.push('rouse'));
    processLike.emit('SIGUSR1');
    processLike.emit('SIGUSR1');
    stop();
    processLike.emit('SIGUSR1');
    expect(heard).toEqual(['rouse', 'rouse']);
    expect(processLike.listenerCount('SIGUSR1')).toBe(0);
  });
});
