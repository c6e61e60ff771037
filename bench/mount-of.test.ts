import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeMount, mountOf } from './mount-of';

const MOUNTINFO = [
  '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard',
  '23 22 0:21 / /dev/shm rw,nosuid shared:2 - tmpfs tmpfs rw,size=1024k',
  '24 22 254:1 / /var/with\\040space rw shared:3 - xfs /dev/vdb rw',
  '',
].join('\n');

describe('mountOf', () => {
  let jbd2: string;
  beforeEach(() => {
    jbd2 = mkdtempSync(path.join(os.tmpdir(), 'jbd2-'));
  });
  afterEach(() => rmSync(jbd2, { recursive: true, force: true }));

  it('takes the longest mount point holding the directory, and says an ext4 without a journal has none', () => {
    expect(mountOf('/tmp/bench', MOUNTINFO, jbd2)).toEqual({ mountPoint: '/', type: 'ext4', source: '/dev/vda', journal: false });
    expect(mountOf('/dev/shm/x', MOUNTINFO, jbd2)).toEqual({ mountPoint: '/dev/shm', type: 'tmpfs', source: 'tmpfs' });
    // /dev/shmx is not under /dev/shm.
    expect(mountOf('/dev/shmx', MOUNTINFO, jbd2)?.mountPoint).toBe('/');
  });

  it('finds the journal jbd2 lists for the device', () => {
    mkdirSync(path.join(jbd2, 'vda-8'));
    expect(mountOf('/tmp', MOUNTINFO, jbd2)?.journal).toBe(true);
    expect(describeMount('/tmp', mountOf('/tmp', MOUNTINFO, jbd2))).toBe('/tmp is ext4 on /dev/vda at /, with a journal');
  });

  it('unescapes mount points with spaces', () => {
    expect(mountOf('/var/with space/a', MOUNTINFO, jbd2)).toEqual({ mountPoint: '/var/with space', type: 'xfs', source: '/dev/vdb' });
  });

  it('reads this machine: the temporary directory is on some mount', () => {
    const mount = mountOf(os.tmpdir());
    expect(mount?.mountPoint.startsWith('/')).toBe(true);
    expect(describeMount(os.tmpdir()).startsWith(`${os.tmpdir()} is ${mount?.type} on `)).toBe(true);
  });
});
