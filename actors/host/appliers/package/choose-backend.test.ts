import { ApkBackend } from './apk.backend';
import { NoPackageManager, UnknownPackageManager, chooseBackend } from './choose-backend';
import { DpkgBackend } from './dpkg.backend';
import { PacmanBackend } from './pacman.backend';

describe('chooseBackend', () => {
  test('picks the backend for the package manager the profile names', () => {
    expect(chooseBackend('apt')).toBeInstanceOf(DpkgBackend);
    expect(chooseBackend('pacman')).toBeInstanceOf(PacmanBackend);
    expect(chooseBackend('apk')).toBeInstanceOf(ApkBackend);
    expect(chooseBackend('pacman').manager).toBe('pacman');
  });

  test('passes the package source on to the backend it picks', () => {
    const backend = chooseBackend('apt', { source: { kind: 'directory', path: '/srv/mesh-repository' } });

    expect(backend.describe()).toBe('apt/dpkg (the flat repository in /srv/mesh-repository)');
  });

  test('refuses a machine with no package manager, saying what to do', () => {
    const refusal = (() => {
      try {
        chooseBackend('none');
        return undefined;
      } catch (error) {
        return error;
      }
    })();

    expect(refusal).toBeInstanceOf(NoPackageManager);
    expect((refusal as NoPackageManager).toText()).toBe(
      'error: this machine\'s profile names no package manager, so the host cannot apply package resources here: "none"\n' +
        'next:  leave package resources out of the modules assigned to this node, or install apt, pacman or apk and check with `nox-mesh-host profile` that it is found\n',
    );
  });

  test('refuses a package manager it does not know, quoting it', () => {
    expect(() => chooseBackend('dnf')).toThrow(UnknownPackageManager);
    expect(() => chooseBackend('dnf')).toThrow('"dnf"');
  });

  test('refuses a repository directory that a package manager\'s configuration could not hold', () => {
    expect(() => chooseBackend('pacman', { source: { kind: 'directory', path: 'relative/repo' } })).toThrow(/absolute path/);
    expect(() => chooseBackend('apt', { source: { kind: 'directory', path: '/srv/my repo' } })).toThrow(/without spaces/);
  });
});
