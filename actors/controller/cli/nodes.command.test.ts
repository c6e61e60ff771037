import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NODE_PAGE_MAX } from '../nodes/node-page-args';
import { NodesCommand } from './nodes.command';
import { runCommand, type CommandRun } from './testing/run-command';

// What `mesh-control nodes` refuses before it asks the controller anything: the mesh directory
// here is empty, so reaching the controller would fail differently (no mesh.json).

const run = (args: string[]): Promise<CommandRun> => runCommand(NodesCommand, args);

describe('mesh-control nodes, on this machine', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nodes-command-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('refuses a --limit that is not a whole number of nodes the controller answers in a page, quoting it', async () => {
    for (const given of ['ten', '0', '2.5', '-3', String(NODE_PAGE_MAX + 1)]) {
      const result = await run(['nodes', `--limit=${given}`, '--dir', dir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error: --limit must be a whole number of nodes from 1 to ${NODE_PAGE_MAX}: ${JSON.stringify(given)}\n` +
          `next:  give --limit a number from 1 to ${NODE_PAGE_MAX} (e.g. --limit 100), or leave out --limit and --after to list every node\n`,
      );
    }
  });

  test('names the condition of a bad --limit under --json', async () => {
    const result = await run(['nodes', '--limit', 'all', '--dir', dir, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error).toMatchObject({ condition: 'NodesLimitInvalid', value: 'all', retryable: false });
  });

  test('takes a --limit at the largest page the controller answers, and goes on to ask it', async () => {
    // The mesh directory is empty, so what stops it is the missing configuration, not the limit.
    const result = await run(['nodes', '--limit', String(NODE_PAGE_MAX), '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/--limit/);
  });
});
