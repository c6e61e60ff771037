import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SecretChanged, SecretListed } from '../actors/controller/secrets/keep-secret';
import type { IssuedToken } from '../actors/controller/tokens/issue-enrolment-token';
import { MeshRig, REPO_DIR } from './mesh-rig';
import { jsonOf, runCli, succeeded, type CliResult } from './run-cli';
import { done, notYet, until } from './until';

// A secret set with `mesh-control secret set`, named by a module's file, assigned to a real host
// and read back on its machine with the declared owner and mode; then every file the mesh
// wrote (the store, the hosts' state, every log) and everything the verbs printed is searched
// for the value. Last, the node's key dies, and `token issue` names what can no longer be sealed.

const VALUE = 'e2e-secret-R7kz93-never-logged';
const MESH_CONTROL = path.join(REPO_DIR, 'bin', 'mesh-control');

describe('a sealed secret through real processes', () => {
  let parent: string;
  let rig: MeshRig;
  const printed: CliResult[] = [];
  const control = async (args: readonly string[]): Promise<CliResult> => {
    const result = await rig.control(args);
    printed.push(result);
    return result;
  };

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-secrets-'));
    rig = new MeshRig({ dir: parent, hosts: ['a'] });
    await rig.start();
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  test('is written on the host as its account, and its value is nowhere else', async () => {
    const root = rig.hostRoot('a');
    await fs.writeFile(path.join(root, 'etc', 'passwd'), 'root:x:0:0::/root:/bin/sh\napp:x:1234:1234::/srv/app:/bin/sh\n');
    await fs.writeFile(path.join(root, 'etc', 'group'), 'root:x:0:\napp:x:2345:\n');
    const issued = await rig.issueToken({ new: true });
    await rig.enrol('a', issued.token);
    await rig.host('a').waitFor(/linked to \S+ as node a/);

    // The value from a file, and a second version through standard input (a file on stdin).
    const secrets = path.join(parent, 'secrets');
    await fs.mkdir(secrets, { mode: 0o700 });
    const valueFile = path.join(secrets, 'db-password');
    await fs.writeFile(valueFile, 'first value', { mode: 0o600 });
    expect(jsonOf<SecretChanged>(await control(['secret', 'set', 'app', 'db-password', '--from-file', valueFile, '--json']))).toMatchObject({ version: 1 });
    await fs.writeFile(valueFile, VALUE, { mode: 0o600 });
    const piped = await runCli(['/bin/sh', '-c', `exec "$0" "$1" secret set app db-password --json --dir "$2" < "$3"`, process.execPath, MESH_CONTROL, rig.meshDir, valueFile], { cwd: REPO_DIR });
    printed.push(piped);
    expect(jsonOf<SecretChanged>(piped)).toMatchObject({ module: 'app', name: 'db-password', version: 2, bytes: VALUE.length });
    const empty = await control(['secret', 'set', 'app', 'db-password', '--from-file', '/dev/null']);
    expect([empty.code, empty.stderr]).toEqual([1, expect.stringMatching(/--from-file must name a regular file/)]);

    const moduleDir = path.join(parent, 'app');
    await fs.mkdir(moduleDir);
    const file = { shape: 'file', path: '/etc/app/db-password', content: { secret: 'db-password' }, owner: 'app', group: 'app', mode: '0640' };
    await fs.writeFile(path.join(moduleDir, 'module.json'), JSON.stringify({ name: 'app', version: '1', resources: [file] }));
    succeeded(await control(['module', 'add', moduleDir, '--json']));
    succeeded(await control(['assign', 'a', 'app', '--json']));

    const target = path.join(root, 'etc', 'app', 'db-password');
    await until('the host to write the secret', async () => {
      const text = await fs.readFile(target, 'utf8').catch(() => undefined);
      return text === VALUE ? done(text) : notYet(String(text));
    }, { timeoutMs: 60_000 });
    const written = await fs.stat(target);
    expect([written.uid, written.gid, written.mode & 0o7777]).toEqual([1234, 2345, 0o640]);

    const listed = jsonOf<{ secrets: SecretListed[] }>(await control(['secret', 'list', '--json']));
    expect(listed.secrets).toEqual([expect.objectContaining({ module: 'app', name: 'db-password', version: 2, cannot_seal_to: [] })]);
    for (const args of [['status', '--json'], ['status'], ['owned', '--json'], ['briefing', '--json'], ['reconcile', '--json']]) printed.push(await rig.hostCli('a', args));
    printed.push(await control(['status', '--json']), await control(['nodes', '--json']));

    // The search finds the one file that should hold it, and nothing else does.
    expect(await filesHolding(parent, VALUE, new Set([valueFile]))).toEqual([path.relative(parent, target)]);
    expect(printed.filter((result) => `${result.stdout}${result.stderr}`.includes(VALUE)).map((result) => result.command)).toEqual([]);
    // As it crossed the broker to the controller (base64 in the call): kept by no stream or bucket.
    expect(await filesHolding(parent, Buffer.from(VALUE).toString('base64'), new Set())).toEqual([]);
  }, 180_000);

  test('once its key dies, token issue names each item the mesh can no longer seal to it', async () => {
    const issued = jsonOf<IssuedToken>(await control(['token', 'issue', '--node', 'a', '--json']));
    expect(issued.cannot_seal_to?.sealed).toEqual(['app/db-password version 2 for /etc/app/db-password']);
    const listed = await control(['secret', 'list']);
    expect(listed.stdout).toMatch(/can no longer seal to these[\s\S]*a: app\/db-password version 2 for \/etc\/app\/db-password/);
    const problem = await until('status to name what node a can no longer be sealed', async () => {
      const status = jsonOf<{ problems: Array<{ kind: string; subject: string; detail: string }> }>(await control(['status', '--json']));
      const found = status.problems.find((p) => p.kind === 'secret' && p.subject === 'a');
      return found === undefined ? notYet(JSON.stringify(status.problems)) : done(found);
    }, { timeoutMs: 30_000 });
    expect(problem.detail).toMatch(/app\/db-password version 2 for \/etc\/app\/db-password; enrol it again/);
  }, 60_000);
});

/** Every regular file under `dir`, but those in `skip`, whose bytes hold `needle`. */
async function filesHolding(dir: string, needle: string, skip: ReadonlySet<string>): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() || skip.has(full)) continue;
    if ((await fs.readFile(full)).includes(needle)) found.push(path.relative(dir, full));
  }
  return found;
}
