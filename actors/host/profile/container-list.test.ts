import { parseContainerList } from './container-list';
import { DOCKER_PS, PODMAN_PS } from './testing/machine-listings';

describe('the container list', () => {
  test('reads docker\'s lines, taking the first name and the state', () => {
    expect(parseContainerList(DOCKER_PS)).toEqual([
      { name: 'db', image: 'postgres:16', state: 'exited' },
      { name: 'web', image: 'nginx:1.27', state: 'running' },
    ]);
  });

  test('reads podman\'s array', () => {
    expect(parseContainerList(PODMAN_PS)).toEqual([
      { name: 'cache', image: 'docker.io/library/redis:7', state: 'running' },
      { name: 'node-exporter', image: 'quay.io/prometheus/node-exporter:v1.8.2', state: 'created' },
    ]);
  });

  test('reads the state from the status when an old engine gives none', () => {
    const lines = [
      '{"Image":"a","Names":"up","Status":"Up 2 hours (Paused)"}',
      '{"Image":"b","Names":"down","Status":"Exited (137) 5 minutes ago"}',
      '{"Image":"c","Names":"odd","State":"Up and Away!"}',
    ].join('\n');
    expect(parseContainerList(lines)).toEqual([
      { name: 'down', image: 'b', state: 'exited' },
      { name: 'odd', image: 'c', state: 'unknown' },
      { name: 'up', image: 'a', state: 'paused' },
    ]);
  });

  test('skips a line that is not JSON and an entry without a name', () => {
    expect(parseContainerList('WARNING: something\n{"Image":"x","Names":""}\n{"Image":"y","Names":"ok","State":"running"}\n')).toEqual([
      { name: 'ok', image: 'y', state: 'running' },
    ]);
  });
});
