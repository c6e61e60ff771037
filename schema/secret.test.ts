import { expectRefused, expectRoundTrip } from './expect-contract';
import { ResourceList } from './resource';
import { MAX_SECRET_BYTES, modeOpensToOthers } from './secret';

const secretFile = { shape: 'file', path: '/etc/app/db-password', content: { secret: 'db-password' }, owner: 'app', group: 'app', mode: '0600' };
const box = Buffer.alloc(80, 7).toString('base64');

describe('secret file content', () => {
  test('a module file may name a secret, and a declaration may carry it sealed', () => {
    expect(expectRoundTrip(ResourceList, [secretFile], 'resources')[0]).toMatchObject({ content: { secret: 'db-password' }, mode: '0600', owner: 'app' });
    const sealed = { ...secretFile, content: { sealed: { secret: 'web/db-password', version: 3, box } } };
    expect(expectRoundTrip(ResourceList, [sealed], 'resources')[0]).toMatchObject({ content: { sealed: { version: 3 } } });
  });

  test('refuses a secret file left at the default mode, which every account can read', () => {
    const { mode: _mode, ...unsaid } = secretFile;
    expectRefused(ResourceList, [unsaid], 'resources', 'resources[0].mode', /must not be open to every account \(mode 0644\)/);
  });

  test('refuses a sealed file written world-readable, whoever wrote it', () => {
    const sealed = { ...secretFile, mode: '0604', content: { sealed: { secret: 'web/db-password', version: 1, box } } };
    expectRefused(ResourceList, [sealed], 'resources', 'resources[0].mode', /declare "mode": "0600" or "0640"/);
  });

  test('refuses a secret name that could be read as a path, and a box too short to be one', () => {
    expectRefused(ResourceList, [{ ...secretFile, content: { secret: '../db' } }], 'resources', 'resources[0].content.secret', /expected a secret name/);
    const short = { ...secretFile, content: { sealed: { secret: 'web/db-password', version: 1, box: Buffer.alloc(10).toString('base64') } } };
    expectRefused(ResourceList, [short], 'resources', 'resources[0].content.sealed.box', /expected a sealed box of 48/);
  });

  test('group and owner access is allowed; any bit for others is not', () => {
    expect(['0600', '0640', '0660', '0400'].map(modeOpensToOthers)).toEqual([false, false, false, false]);
    expect(['0644', '0601', '0602', '0604'].map(modeOpensToOthers)).toEqual([true, true, true, true]);
    expect(MAX_SECRET_BYTES).toBe(65536);
  });
});
