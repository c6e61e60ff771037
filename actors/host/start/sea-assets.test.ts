import { startsRun } from './sea-assets';

describe('startsRun', () => {
  test('names the verb as the host reads it: the first word that is not an option', () => {
    expect([
      startsRun(['run']),
      startsRun(['run', '--json']),
      startsRun(['--json', 'run']),
      startsRun(['apply', 'run']),
      startsRun(['apply', 'declaration.json']),
      startsRun(['--help']),
      startsRun([]),
    ]).toEqual([true, true, true, false, false, false, false]);
  });
});
