import { parseDpkgStatus } from './dpkg-status';
import { DPKG_STATUS } from './testing/machine-listings';

describe('the dpkg status file', () => {
  test('lists installed, held and trigger-waiting packages, and leaves out removed and half-done ones', () => {
    expect(parseDpkgStatus(DPKG_STATUS).map(({ name, version }) => `${name} ${version}`)).toEqual([
      'base-files 12.4+deb12u5',
      'libc6:amd64 2.36-9+deb12u7',
      'libc6:i386 2.36-9+deb12u7',
      'openssh-server 1:9.2p1-2+deb12u3',
      'man-db 2.11.2-2',
    ]);
  });

  test('does not list a package removed with its configuration kept (deinstall ok config-files)', () => {
    expect(parseDpkgStatus(DPKG_STATUS).map((pkg) => pkg.name)).not.toContain('nginx-common');
  });

  test('reads paragraphs separated by several blank lines, and a last one without a final newline', () => {
    const text = 'Package: a\nStatus: install ok installed\nVersion: 1\n\n\n\nPackage: b\nStatus: install ok installed\nVersion: 2';
    expect(parseDpkgStatus(text).map((pkg) => pkg.name)).toEqual(['a', 'b']);
  });

  test('lists nothing for an empty database', () => {
    expect(parseDpkgStatus('')).toEqual([]);
  });
});
