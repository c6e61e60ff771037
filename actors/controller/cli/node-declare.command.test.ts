import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeDeclareCommand } from './node-declare.command';
import { runCommand, type CommandRun } from './testing/run-command';

// What `node declare` refuses on this machine, before it asks the controller anything: the
// mesh directory here is empty, so reaching the controller would fail differently.

const run = (args: string[]): Promise<CommandRun> => runCommand(NodeDeclareCommand, args);

describe('mesh-control node declare, on this machine', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'node-declare-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('says a file it cannot read is unreadable, naming it', async () => {
    const missing = path.join(dir, 'missing.json');
    const result = await run(['node', 'declare', 'alpha', missing, '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: the declaration file could not be read: ${JSON.stringify(missing)}\nnext:  check the path and that the file is readable\n`);
  });

  test('names the field of a declaration that does not match the contract, as JSON under --json', async () => {
    const file = path.join(dir, 'bad.json');
    await fs.writeFile(file, JSON.stringify({ resources: [{ shape: 'file', path: 'etc/motd', content: { text: '' } }] }));
    const result = await run(['node', 'declare', 'alpha', file, '--dir', dir, '--json']);
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).error;
    expect(error.condition).toBe('ContractViolation');
    expect(error.what).toMatch(/resources\[0\]\.path/);
    expect(error.next).toContain(file);
  });

  test('says a file that is not JSON is not JSON', async () => {
    const file = path.join(dir, 'text.json');
    await fs.writeFile(file, 'resources: []');
    const result = await run(['node', 'declare', 'alpha', file, '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: the declaration file is not JSON/);
  });
});
