import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProvisionsCommand, RotateCommand } from './rotate.command';
import { runCommand } from './testing/run-command';

// What `rotate` refuses before it asks the controller anything: the mesh directory here is
// empty, so reaching the controller would fail differently (no mesh.json).

describe('rotate on the command line, before the controller is asked', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rotate-command-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('without --why is refused, naming the provision in the way to give it', async () => {
    const result = await runCommand(RotateCommand, ['rotate', 'app-database', '--consumer', 'beta', '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: `rotate` is a hand act and is kept with its reason: --why is required; nothing was done\nnext: +.*mesh-control rotate app-database --why/);
  });

  test('a provision, node or module that is not a name is refused with what to give, under --json too', async () => {
    const bad = await runCommand(RotateCommand, ['rotate', 'App_Database', '--why', 'x', '--dir', dir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/provision name[\s\S]*next: +give the provision as a module.json names it/);
    const json = await runCommand(RotateCommand, ['rotate', 'app-database', '--module', 'Web App', '--why', 'x', '--dir', dir, '--json']);
    expect(JSON.parse(json.stdout).error).toMatchObject({ next: expect.stringMatching(/give --module the consuming module/) });
  });

  test('--help of each verb carries an example', async () => {
    expect((await runCommand(RotateCommand, ['rotate', '--help'])).stdout).toMatch(/mesh-control rotate app-database --consumer beta --module app --why/);
    expect((await runCommand(ProvisionsCommand, ['provisions', '--help'])).stdout).toMatch(/mesh-control provisions --json/);
  });
});
