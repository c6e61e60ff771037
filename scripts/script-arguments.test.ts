import path from 'node:path';
import { parseArguments as hostArguments, REPOSITORY } from './build-host';
import { parseArguments as packageArguments } from './build-packages';
import { scriptArguments, wholeNumberOption } from './script-arguments';

describe('scriptArguments', () => {
  const options = { out: { type: 'string' }, fast: { type: 'boolean' } } as const;

  test('reads options in both spellings, --out DIR and --out=DIR', () => {
    expect(scriptArguments(['--out', 'a', '--fast'], options, 'demo [--out DIR] [--fast]')).toEqual({ out: 'a', fast: true });
    expect(scriptArguments(['--out=b'], options, 'demo [--out DIR] [--fast]')).toEqual({ out: 'b' });
  });

  test.each([
    ['an unknown option', ['--fats']],
    ['an option without its value', ['--out']],
    ['a stray word', ['fast']],
  ])('refuses %s, giving the usage', (_what, argv) => {
    expect(() => scriptArguments(argv, options, 'demo [--out DIR] [--fast]')).toThrow(/; usage: demo \[--out DIR\] \[--fast\]$/);
  });

  test('takes a whole number of 1 or more, and quotes anything else', () => {
    expect(wholeNumberOption('--release', '3')).toBe(3);
    for (const bad of ['0', '-1', '1.5', '2x', '']) {
      expect(() => wholeNumberOption('--release', bad)).toThrow(`--release is a whole number, 1 or more, not ${JSON.stringify(bad)}`);
    }
  });
});

describe('the build scripts\' command lines', () => {
  test('build-host reads every option, repeated ones too', () => {
    expect(hostArguments(['--out', 'out', '--system', 'debian', '--system=alpine', '--node', 'alpine=/opt/node', '--release', '2', '--bundle-only'])).toEqual({
      outDir: path.resolve('out'),
      systems: ['debian', 'alpine'],
      nodeFor: { alpine: path.resolve('/opt/node') },
      release: 2,
      bundleOnly: true,
    });
    expect(hostArguments([])).toEqual({ outDir: path.join(REPOSITORY, 'dist') });
  });

  test('build-host refuses an unknown system, a --node without its path, and an unknown option', () => {
    expect(() => hostArguments(['--system', 'gentoo'])).toThrow('not "gentoo"');
    expect(() => hostArguments(['--node', 'alpine'])).toThrow('--node takes SYSTEM=PATH');
    expect(() => hostArguments(['--bundle'])).toThrow(/usage: build-host/);
  });

  test('build-packages reads --out, --release and --fast, and refuses a release that is not a whole number', () => {
    expect(packageArguments(['--out=o', '--release', '4', '--fast'])).toEqual({ outDir: path.resolve('o'), release: 4, fast: true });
    expect(packageArguments([])).toEqual({ outDir: path.join(REPOSITORY, 'dist'), release: 1, fast: false });
    expect(() => packageArguments(['--release', 'next'])).toThrow('--release is a whole number, 1 or more, not "next"');
    expect(() => packageArguments(['--slow'])).toThrow(/usage: build-packages/);
  });
});
