import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { Inventory } from './inventory';

const inventory = {
  packages: [
    { name: 'docker', version: '27.3.1-r0' },
    { name: 'libc6', version: '2.36-9+deb12u4' },
    { name: 'openssh-server', version: '1:9.2p1-2+deb12u3' },
  ],
  services: [
    { name: 'sshd', state: 'running', enabled: true },
    { name: 'docker', state: 'running', enabled: true },
    { name: 'cups', state: 'failed', enabled: false },
  ],
  containers: [
    { name: 'registry', image: 'docker.io/library/registry:2.8.3', state: 'running' },
    { name: 'old-web', image: 'nginx:1.25', state: 'exited' },
  ],
  collected_at: '2026-08-27T14:01:55Z',
};

describe('the inventory', () => {
  it('round-trips an inventory through JSON', () => {
    expect(expectRoundTrip(Inventory, inventory, 'inventory')).toEqual(inventory);
  });

  it('round-trips an inventory cut short at the host bound', () => {
    expect(expectRoundTrip(Inventory, { ...inventory, truncated: true }, 'inventory')).toMatchObject({ truncated: true });
  });

  it.each<RefusalCase>([
    { name: 'a package without a version', input: { ...inventory, packages: [{ name: 'docker' }] }, path: 'inventory.packages[0].version', says: /required/ },
    { name: 'a package name with a control character', input: { ...inventory, packages: [{ name: 'doc\u001bker', version: '1' }] }, path: 'inventory.packages[0].name', says: /control characters/ },
    { name: 'a service state outside the four', input: { ...inventory, services: [{ name: 'sshd', state: 'activating', enabled: true }] }, path: 'inventory.services[0].state' },
    { name: 'a container state with capitals', input: { ...inventory, containers: [{ name: 'web', image: 'nginx', state: 'Up 3 hours' }] }, path: 'inventory.containers[0].state', says: /container state/ },
    { name: 'a collection time that is a date only', input: { ...inventory, collected_at: '2026-08-27' }, path: 'inventory.collected_at', says: /UTC time/ },
    { name: 'truncated given as a number', input: { ...inventory, truncated: 1 }, path: 'inventory.truncated', says: /expected boolean/ },
    { name: 'a field inventories do not carry', input: { ...inventory, users: [] }, path: 'inventory.users', says: /unknown field/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(Inventory, input, 'inventory', path, says);
  });
});
