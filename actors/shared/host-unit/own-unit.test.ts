import { ownUnitRefusal, PACKAGED_HOST_RULES } from './own-unit';

// The one own-unit check both sides run: the host's gate refuses with it, the controller's
// doctor foresees the refusal with it.

describe('ownUnitRefusal', () => {
  test.each([
    [{ shape: 'service', name: 'nox-mesh-host-launch', state: 'stopped', enabled: false }, /the host itself/],
    [{ shape: 'file', path: '/var/lib/mesh-host/state.json', content: { text: '{}' } }, /state directory/],
    [{ shape: 'directory', path: '/etc/systemd/system/nox-mesh-host.service.d' }, /how the host itself runs/],
  ] as const)('refuses %o', (resource, why) => {
    expect(ownUnitRefusal(resource as never, PACKAGED_HOST_RULES)).toMatch(why);
  });

  test('takes what is not the host\'s, and a state directory moved elsewhere frees the packaged one', () => {
    expect(ownUnitRefusal({ shape: 'service', name: 'nginx', state: 'running', enabled: true }, PACKAGED_HOST_RULES)).toBeUndefined();
    expect(ownUnitRefusal({ shape: 'package', name: 'nox-mesh-host' } as never, PACKAGED_HOST_RULES)).toBeUndefined();
    const moved = { ...PACKAGED_HOST_RULES, stateDir: '/srv/mesh-state' };
    expect(ownUnitRefusal({ shape: 'file', path: '/var/lib/mesh-host/notes', content: { text: 'x' } } as never, moved)).toBeUndefined();
    expect(ownUnitRefusal({ shape: 'file', path: '/srv/mesh-state/notes', content: { text: 'x' } } as never, moved)).toMatch(/state directory/);
  });
});
