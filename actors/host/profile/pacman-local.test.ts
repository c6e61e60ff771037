import { parsePacmanDesc, readPacmanLocal } from './pacman-local';
import { machineRoots } from './testing/machine-tree';
import { pacmanDesc } from './testing/machine-listings';

const roots = machineRoots('pacman-local');
afterAll(() => roots.cleanup());

describe('the pacman local database', () => {
  test('reads name and version from a desc, not confusing them with later sections', () => {
    expect(parsePacmanDesc(pacmanDesc('openssl', '3.3.2-1'))).toEqual({ name: 'openssl', version: '3.3.2-1' });
  });

  test('says nothing for a desc without a version', () => {
    expect(parsePacmanDesc('%NAME%\nhalf\n\n')).toBeUndefined();
  });

  test('reads every package directory, skips ALPM_DB_VERSION and names entries without a desc', async () => {
    const root = await roots.make({
      'local/ALPM_DB_VERSION': '9\n',
      'local/bash-5.2.037-1/desc': pacmanDesc('bash', '5.2.037-1'),
      'local/bash-5.2.037-1/files': '%FILES%\nusr/\nusr/bin/\nusr/bin/bash\n\n',
      'local/zstd-1.5.6-1/desc': pacmanDesc('zstd', '1.5.6-1'),
      'local/interrupted-1-1': null,
    });
    expect(await readPacmanLocal(`${root}/local`)).toEqual({
      packages: [{ name: 'bash', version: '5.2.037-1' }, { name: 'zstd', version: '1.5.6-1' }],
      unreadable: ['interrupted-1-1'],
    });
  });
});
