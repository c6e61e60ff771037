import { parseBuildProp, parseOsRelease } from './os-release';

describe('os-release', () => {
  test('reads double-quoted, single-quoted and bare values, with escapes, skipping comments', () => {
    const fields = parseOsRelease([
      '# written by the image builder',
      'ID=debian',
      'PRETTY_NAME="Debian \\"testing\\" \\$HOME"',
      "VARIANT='Server $edition'",
      'VERSION_ID=12',
      'not a field',
      '',
    ].join('\n'));
    expect(Object.fromEntries(fields)).toEqual({
      ID: 'debian',
      PRETTY_NAME: 'Debian "testing" $HOME',
      VARIANT: 'Server $edition',
      VERSION_ID: '12',
    });
  });
});

describe('build.prop', () => {
  test('reads key=value lines and keeps an = inside a value', () => {
    const fields = parseBuildProp('# comment\nro.build.version.release=14\nro.build.fingerprint=google/x:14/AP=1\n');
    expect(fields.get('ro.build.version.release')).toBe('14');
    expect(fields.get('ro.build.fingerprint')).toBe('google/x:14/AP=1');
  });
});
