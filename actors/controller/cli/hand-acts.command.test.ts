import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DurationsCommand } from './durations.command';
import { HandActRecordCommand, HandActsCommand } from './hand-acts.command';
import { NodeRevokeCommand } from './node-revoke.command';
import { PlansCloseCommand } from './plans.command';
import { PushCommand } from './push.command';
import { runCommand } from './testing/run-command';

// What the hand-act and duration verbs refuse before they ask the controller anything: the mesh
// directory here is empty, so reaching the controller would fail differently (no mesh.json).

describe('hand acts and durations on the command line, before the controller is asked', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hand-acts-command-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('push without --why is refused, naming the node in the way to give it', async () => {
    const result = await runCommand(PushCommand, ['push', 'alpha', '--dir', dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: `push` is a hand act and is kept with its reason: --why is required; nothing was done\n' +
        'next:  say in a line why you do it by hand, e.g. mesh-control push alpha --why "its disk was replaced"\n',
    );
  });

  test('hand-act record without --why, or with a reason of two lines, is refused; under --json the error is named', async () => {
    expect((await runCommand(HandActRecordCommand, ['hand-act', 'record', '--dir', dir])).stderr).toMatch(/^error: `hand-act record` is a hand act and is kept with its reason: --why is required/);
    const json = await runCommand(HandActRecordCommand, ['hand-act', 'record', '--why', 'one\ntwo', '--dir', dir, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error).toMatchObject({ condition: 'HandActWhyInvalid', value: 'one\ntwo' });
  });

  test('a --condition that is not a condition\'s id is refused on every hand act, quoting it', async () => {
    const runs = [
      await runCommand(PushCommand, ['push', '--why', 'x', '--condition', 'a b', '--dir', dir]),
      await runCommand(PlansCloseCommand, ['plans', 'close', '4', '--condition', 'a b', '--dir', dir]),
      await runCommand(NodeRevokeCommand, ['node', 'revoke', 'laptop-7', '--condition', 'a b', '--dir', dir]),
      await runCommand(HandActRecordCommand, ['hand-act', 'record', '--why', 'x', '--condition', 'a b', '--dir', dir]),
    ];
    for (const result of runs) {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: --condition must be a condition's id .*: "a b"\nnext: {2}copy the id from mesh-control conditions, or leave out --condition\n$/);
    }
  });

  test('hand-acts and durations refuse a --since, --limit or --kind they cannot use, naming what they take', async () => {
    expect((await runCommand(HandActsCommand, ['hand-acts', '--since', 'a week', '--dir', dir])).stderr).toBe(
      'error: --since is not a duration like 30m, 6h or 7d: "a week"\nnext:  give a whole number and one unit, from 1m to 365d: --since 30m, --since 6h, --since 7d\n',
    );
    expect((await runCommand(HandActsCommand, ['hand-acts', '--limit', '0', '--dir', dir])).stderr).toMatch(/^error: --limit must be a whole number of hand acts from 1 to 1000: "0"\n/);
    expect((await runCommand(DurationsCommand, ['durations', '--since', '31d', '--dir', dir])).stderr).toMatch(/^error: --since is longer than 30d, longer than what is kept: "31d"\n/);
    expect((await runCommand(DurationsCommand, ['durations', '--kind', 'build', '--dir', dir])).stderr).toBe(
      'error: --kind names no kind of duration the controller measures: "build"\nnext:  give one of apply, heartbeat-gap, plan-tier, or leave out --kind for all\n',
    );
  });

  test('each new verb\'s --help shows an example', async () => {
    for (const [command, args, example] of [
      [HandActRecordCommand, ['hand-act', 'record'], '$ mesh-control hand-act record --why "restarted the broker after its disk filled"'],
      [HandActsCommand, ['hand-acts'], '$ mesh-control hand-acts --since 7d --json'],
      [DurationsCommand, ['durations'], '$ mesh-control durations --kind heartbeat-gap --since 1h --json'],
    ] as const) {
      const result = (await runCommand(command, [...args, '--help'])).stdout;
      expect(result).toMatch(/^Examples$/m);
      expect(result).not.toContain('#0');
      expect(result).toContain(example);
    }
  });
});
