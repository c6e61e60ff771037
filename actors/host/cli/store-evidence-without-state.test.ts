import { PassThrough } from 'node:stream';
import { reportFailure } from '../../shared/cli/report-failure';
import { StoreEvidenceWithoutState } from './store-evidence-without-state';

// The store's "gone, but the host was here" condition as every verb says it: exit 4, two lines
// on stderr, and under --json the document naming the condition.

test('a store gone where the state directory shows earlier use exits 4, named in the JSON document', () => {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const error = new StoreEvidenceWithoutState('state.json and its last-good copy are both missing, and originals/ holds what adoption kept', {
    value: '/var/lib/mesh-host',
    next: 'restore state.json from a backup',
  });

  const status = reportFailure(error, { stdout, stderr, json: true, binaryName: 'nox-mesh-host' });

  expect(status).toBe(4);
  expect(JSON.parse(String(stdout.read()))).toMatchObject({ error: { condition: 'StoreEvidenceWithoutState', value: '/var/lib/mesh-host' } });
  expect(String(stderr.read())).toMatch(/^error: state\.json and its last-good copy are both missing.*\nnext: {2}restore/);
});
