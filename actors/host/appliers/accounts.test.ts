import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeAccount, resolveGroup, resolveUser, UnknownAccount } from './accounts';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'mesh-accounts-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function accountFiles(passwd: string, group: string): Promise<void> {
  await mkdir(join(root, 'etc'), { recursive: true });
  await writeFile(join(root, 'etc/passwd'), passwd);
  await writeFile(join(root, 'etc/group'), group);
}

describe('accounts', () => {
  test('finds names in the root\'s own passwd and group, not the running machine\'s', async () => {
    await accountFiles('root:x:0:0:root:/root:/bin/sh\ndeploy:x:1234:1234::/home/deploy:/bin/sh\n', 'root:x:0:\nweb:x:2345:deploy\n');
    expect(await resolveUser(root, 'deploy')).toEqual({ id: 1234, name: 'deploy' });
    expect(await resolveGroup(root, 'web')).toEqual({ id: 2345, name: 'web' });
  });

  test('passes numeric ids through without reading anything', async () => {
    expect(await resolveUser(root, '1000')).toEqual({ id: 1000 });
    expect(await resolveGroup(root, '0')).toEqual({ id: 0 });
  });

  test('refuses an unknown user, naming it and the file read', async () => {
    await accountFiles('root:x:0:0::/root:/bin/sh\n', 'root:x:0:\n');
    const refusal = resolveUser(root, 'deploy');
    await expect(refusal).rejects.toBeInstanceOf(UnknownAccount);
    await expect(refusal).rejects.toThrow(`no user named "deploy": it is not in ${join(root, 'etc/passwd')}`);
  });

  test('refuses an unknown group, saying when the group file is missing', async () => {
    await expect(resolveGroup(root, 'web')).rejects.toThrow(`no group named "web": ${join(root, 'etc/group')} does not exist`);
  });

  test('skips comments and NIS entries that share a name', async () => {
    await accountFiles('# deploy:x:1:1\n+deploy::::::\ndeploy:x:77:77::/:/bin/sh\n', '');
    expect((await resolveUser(root, 'deploy')).id).toBe(77);
  });

  test('takes root as id 0 where a bare root has no account files', async () => {
    expect(await resolveUser(root, 'root')).toEqual({ id: 0, name: 'root' });
    expect(await resolveGroup(root, 'root')).toEqual({ id: 0, name: 'root' });
  });

  test('refuses an id chown cannot set', async () => {
    await expect(resolveUser(root, '4294967295')).rejects.toThrow('out of range');
  });

  test('describes an account by id, with the declared name when there was one', () => {
    expect(describeAccount({ id: 0, name: 'root' })).toBe('0 (root)');
    expect(describeAccount({ id: 1000 })).toBe('1000');
  });
});

describe('accounts with a pass\'s memo', () => {
  test('reuses a name found for the rest of the pass, and looks again for a name that was missing', async () => {
    const memo = new Map<string, { id: number; name?: string }>();
    await accountFiles('root:x:0:0:root:/root:/bin/sh\n', 'root:x:0:\n');
    await expect(resolveUser(root, 'deploy', memo)).rejects.toBeInstanceOf(UnknownAccount);
    // An action of the same pass adds the user: found now, then kept.
    await accountFiles('root:x:0:0:root:/root:/bin/sh\ndeploy:x:1234:1234::/home/deploy:/bin/sh\n', 'root:x:0:\n');
    expect(await resolveUser(root, 'deploy', memo)).toEqual({ id: 1234, name: 'deploy' });
    await accountFiles('root:x:0:0:root:/root:/bin/sh\ndeploy:x:4321:4321::/home/deploy:/bin/sh\n', 'root:x:0:\n');
    expect(await resolveUser(root, 'deploy', memo)).toEqual({ id: 1234, name: 'deploy' });
    expect(await resolveUser(root, 'deploy')).toEqual({ id: 4321, name: 'deploy' });
    expect(await resolveGroup(root, 'root', memo)).toEqual({ id: 0, name: 'root' });
    expect([...memo.keys()].sort()).toEqual(['group:root', 'user:deploy']);
  });
});
