import type { RunResult } from '../../../shared/process/command-runner';
import { lastWords } from './last-words';

function ran(partial: Partial<RunResult>): RunResult {
  return { argv: ['apt-get', 'install', 'demo'], code: 100, signal: null, stdout: '', stderr: '', timedOut: false, durationMs: 0, ...partial };
}

describe('lastWords', () => {
  test('starts at the first error line and keeps the detail under it', () => {
    const apk = ran({ argv: ['apk'], code: 1, stderr: 'fetch index\nERROR: unable to select packages:\n  absent (no such package):\n    required by: world[absent]\n' });

    expect(lastWords(apk)).toBe('ERROR: unable to select packages: / absent (no such package): / required by: world[absent]');
  });

  test('keeps to the stream the error was written to', () => {
    const apt = ran({ stderr: 'E: Failed to fetch file:/srv/repo/./Packages\nE: Some index files failed to download.\n', stdout: 'Get:1 file:/srv/repo ./ InRelease\n' });

    expect(lastWords(apt)).toBe('E: Failed to fetch file:/srv/repo/./Packages / E: Some index files failed to download.');
  });

  test('without a marked error it keeps the last lines, from stderr before stdout', () => {
    expect(lastWords(ran({ stdout: 'Reading package lists...', stderr: 'one\ntwo\nthree\nfour\nfive\n' }))).toBe('two / three / four / five');
    expect(lastWords(ran({ stdout: 'only stdout\n' }))).toBe('only stdout');
  });

  test('a program that could not start, ran too long or said nothing still gets words', () => {
    expect(lastWords(ran({ code: null, spawnError: 'spawn apt-get ENOENT' }))).toBe('could not start apt-get: spawn apt-get ENOENT');
    expect(lastWords(ran({ code: null, signal: 'SIGTERM', timedOut: true, durationMs: 1_800_000 }))).toBe('apt-get was still running after 1800 s and was stopped');
    expect(lastWords(ran({}))).toBe('apt-get exited 100 without a word');
  });
});
