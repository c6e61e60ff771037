import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { Owned } from './owned';

const digest = (fill: string) => fill.repeat(64);

const motd = { key: 'file:/etc/motd', shape: 'file', digest: digest('a'), recorded_at: '2026-08-27T14:05:12Z' };
const docker = {
  key: 'package:docker',
  shape: 'package',
  digest: digest('b'),
  recorded_at: '2026-08-27T14:02:40.512Z',
  adopted: true,
};
const daemonJson = {
  key: 'file:/etc/docker/daemon.json',
  shape: 'file',
  digest: digest('c'),
  recorded_at: '2026-08-27T14:02:41Z',
  adopted: true,
  original_kept_at: '/var/lib/mesh-host/kept/etc/docker/daemon.json',
};
const owned = { resources: [motd, docker, daemonJson] };

describe('what the host owns', () => {
  it('round-trips owned and adopted resources through JSON', () => {
    expect(expectRoundTrip(Owned, owned, 'owned')).toEqual(owned);
  });

  it.each<RefusalCase>([
    { name: 'the same key owned twice', input: { resources: [motd, docker, { ...motd, digest: digest('d') }] }, path: 'owned.resources[2].key', says: /duplicate resource key "file:\/etc\/motd": already at \[0\]/ },
    { name: 'a key whose shape disagrees with the shape field', input: { resources: [{ ...motd, shape: 'directory' }] }, path: 'owned.resources[0].key', says: /starting "directory:"/ },
    { name: 'a key that names no shape', input: { resources: [{ ...motd, key: '/etc/motd' }] }, path: 'owned.resources[0].key', says: /resource key like/ },
    { name: 'a digest in capitals', input: { resources: [{ ...motd, digest: digest('A') }] }, path: 'owned.resources[0].digest', says: /64 lowercase hex/ },
    { name: 'a recorded time with an offset', input: { resources: [{ ...motd, recorded_at: '2026-08-27T16:05:12+02:00' }] }, path: 'owned.resources[0].recorded_at', says: /UTC time/ },
    { name: 'a relative place for the kept original', input: { resources: [{ ...daemonJson, original_kept_at: 'kept/daemon.json' }] }, path: 'owned.resources[0].original_kept_at', says: /absolute path/ },
    { name: 'adopted written as a string', input: { resources: [{ ...docker, adopted: 'yes' }] }, path: 'owned.resources[0].adopted', says: /expected boolean/ },
    { name: 'a bare list instead of an object', input: [motd], path: 'owned', says: /expected object, got array/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(Owned, input, 'owned', path, says);
  });
});
