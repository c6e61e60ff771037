import { mkdir, mkdtemp, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as z from 'zod';
import { ActionResource } from '../../../schema/resource';
import { killLeftover, processGone, waitUntilGone } from '../../shared/process/testing/process-gone';
import { ProcessRunner } from '../../shared/process/command-runner';
import { actionApplier } from './action.applier';
import type { ApplyContext } from './applier';
import { ApplyFailed } from './applier';

let root: string;
let ctx: ApplyContext;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-action-root-')));
  await mkdir(join(root, 'var'));
  ctx = { root, stateDir: join(root, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function action(fields: Partial<z.input<typeof ActionResource>> = {}): ActionResource {
  return ActionResource.parse({
    shape: 'action',
    name: 'make-ca',
    // Counts its runs, so a test can tell one run from two.
    argv: ['sh', '-c', 'echo ran >> "$MESH_ROOT/var/count" && touch "$MESH_ROOT/var/ca.pem"'],
    guard: { creates: '/var/ca.pem' },
    ...fields,
  });
}

async function runs(): Promise<number> {
  try {
    return (await readFile(join(root, 'var/count'), 'utf8')).split('\n').filter((line) => line === 'ran').length;
  } catch {
    return 0;
  }
}

describe('actionApplier with a creates guard', () => {
  test('says the action has not run while the path is missing', async () => {
    expect(await actionApplier.observe(action(), ctx)).toEqual({
      present: false,
      differences: ['guard says the action has not run (/var/ca.pem does not exist)'],
    });
  });

  test('runs once across two applies, and then observes nothing to do', async () => {
    expect(await actionApplier.apply(action(), ctx)).toEqual({});
    expect(await actionApplier.apply(action(), ctx)).toEqual({ skipped: 'guard says the action already ran (/var/ca.pem exists)' });
    expect(await runs()).toBe(1);
    expect(await actionApplier.observe(action(), ctx)).toEqual({ present: true, differences: [] });
  });
});

describe('actionApplier with an unless guard', () => {
  const guarded = () => action({ argv: ['sh', '-c', 'echo ran >> var/count'], guard: { unless: ['test', '-s', 'var/count'] } });

  test('says the action has not run while the command fails', async () => {
    expect((await actionApplier.observe(guarded(), ctx)).differences).toEqual(['guard says the action has not run (test -s var/count exited 1)']);
  });

  test('runs once across two applies', async () => {
    await actionApplier.apply(guarded(), ctx);
    expect(await actionApplier.apply(guarded(), ctx)).toEqual({ skipped: 'guard says the action already ran (test -s var/count exited 0)' });
    expect(await runs()).toBe(1);
    expect(await actionApplier.observe(guarded(), ctx)).toEqual({ present: true, differences: [] });
  });

  test('does not run the action when the guard itself cannot run', async () => {
    const blind = action({ argv: ['sh', '-c', 'echo ran >> var/count'], guard: { unless: ['/nonexistent/check'] } });
    const observed = await actionApplier.observe(blind, ctx);
    expect(observed.unreadable).toMatch(/the unless guard of action "make-ca" could not be asked: could not start/);
    await expect(actionApplier.apply(blind, ctx)).rejects.toThrow(/the action was not run/);
    expect(await runs()).toBe(0);
  });
});

describe('actionApplier.apply', () => {
  test('runs in the root with MESH_ROOT and the declared environment, and nothing else of the host\'s', async () => {
    process.env.MESH_TEST_HOST_ONLY = 'leaked';
    try {
      const outcome = await actionApplier.apply(
        action({
          argv: ['sh', '-c', 'echo "$(pwd) $MESH_ROOT $GREETING ${MESH_TEST_HOST_ONLY:-unset}"'],
          env: { GREETING: 'hello' },
          guard: { creates: '/var/never' },
        }),
        ctx,
      );
      expect(outcome.output).toBe(`${root} ${root} hello unset\n`);
    } finally {
      delete process.env.MESH_TEST_HOST_ONLY;
    }
  });

  test('starts in the declared working directory under the root', async () => {
    await mkdir(join(root, 'srv'));
    const outcome = await actionApplier.apply(action({ argv: ['pwd'], cwd: '/srv', guard: { creates: '/var/never' } }), ctx);
    expect(outcome.output).toBe(`${join(root, 'srv')}\n`);
  });

  test('refuses to start in a working directory that is not there', async () => {
    await expect(actionApplier.apply(action({ cwd: '/srv/missing' }), ctx)).rejects.toThrow(
      'action "make-ca" cannot start in /srv/missing: no directory there',
    );
    expect(await runs()).toBe(0);
  });

  test('fails with the exit status and the last lines of stderr', async () => {
    const failing = action({ argv: ['sh', '-c', 'echo first >&2; echo second >&2; exit 3'] });
    const failure = actionApplier.apply(failing, ctx);
    await expect(failure).rejects.toBeInstanceOf(ApplyFailed);
    await expect(failure).rejects.toThrow('failed: sh -c "echo first >&2; echo second >&2; exit 3" exited 3; last lines of stderr:\n  first\n  second');
  });

  test('stops an action that outlives its timeout and fails', async () => {
    // The program says who it is, then becomes the 30 s sleep: once the apply has failed, that
    // process is gone, ended rather than waited out.
    const pidFile = join(root, 'var/action.pid');
    const argv = ['sh', '-c', `echo $$ > ${pidFile}; exec sleep 30`];
    await expect(actionApplier.apply(action({ argv, timeout_seconds: 1 }), ctx)).rejects.toThrow(
      `action "make-ca" failed: sh -c "echo $$ > ${pidFile}; exec sleep 30" timed out after 1 s and was stopped`,
    );
    const pid = Number(await readFile(pidFile, 'utf8'));
    try {
      expect(await waitUntilGone(pid)).toBe(true);
    } finally {
      killLeftover(pid);
    }
  });

  test('says when the program cannot be started', async () => {
    await expect(actionApplier.apply(action({ argv: ['/nonexistent/tool', '--init'] }), ctx)).rejects.toThrow(
      'action "make-ca" could not start /nonexistent/tool',
    );
  });

  test('bounds its output to 16 KiB, keeping the head and the tail and saying what was cut', async () => {
    const loud = action({ argv: ['sh', '-c', 'printf START; head -c 100000 /dev/zero | tr "\\0" x; printf END'], guard: { creates: '/var/never' } });
    const output = (await actionApplier.apply(loud, ctx)).output ?? '';
    expect(Buffer.byteLength(output)).toBeLessThanOrEqual(16 * 1024);
    expect(output.startsWith('STARTxxx')).toBe(true);
    expect(output.endsWith('xxxEND')).toBe(true);
    const cut = /… (\d+) bytes cut …/.exec(output);
    expect(Number(cut?.[1])).toBe(100_008 - (Buffer.byteLength(output) - Buffer.byteLength(cut?.[0] ?? '') - 2));
  });

  test('keeps both streams in the output', async () => {
    const outcome = await actionApplier.apply(action({ argv: ['sh', '-c', 'echo out; echo err >&2'], guard: { creates: '/var/never' } }), ctx);
    expect(outcome.output).toBe('out\n[stderr]\nerr\n');
  });
});

describe('actionApplier and the processes an action leaves', () => {
  const leftovers: number[] = [];
  afterEach(() => {
    for (const pid of leftovers.splice(0)) killLeftover(pid);
  });
  // The actions below print the pid of their background child first: the first line of the
  // output, or of the output a failure quotes.
  function firstPid(text: string): number {
    const pid = Number.parseInt(/(?:^|output:\n {2})(\d+)(?:\n|$)/.exec(text)?.[1] ?? '', 10);
    expect(pid).toBeGreaterThan(1);
    leftovers.push(pid);
    return pid;
  }
  async function failureOf(work: Promise<unknown>): Promise<Error> {
    const outcome = await work.then(() => undefined, (error: unknown) => error);
    expect(outcome).toBeInstanceOf(ApplyFailed);
    return outcome as Error;
  }

  test('a timeout ends the background child that holds the output, and the apply fails instead of waiting for it', async () => {
    const lingering = action({ argv: ['sh', '-c', 'sleep 60 & echo $!; echo started; wait'], timeout_seconds: 1, guard: { creates: '/var/never' } });
    const failure = await failureOf(actionApplier.apply(lingering, ctx));
    expect(failure.message).toMatch(/timed out after 1 s and was stopped; last lines of output:\n {2}\d+\n {2}started/);
    expect(await waitUntilGone(firstPid(failure.message))).toBe(true);
  }, 30_000);

  test('a child that ignores SIGTERM is killed when the action times out', async () => {
    const stubborn = action({ argv: ['sh', '-c', 'trap "" TERM; sleep 60 & echo $!; wait; wait'], timeout_seconds: 1, guard: { creates: '/var/never' } });
    const failure = await failureOf(actionApplier.apply(stubborn, ctx));
    expect(failure.message).toMatch(/timed out after \d+ s and was stopped/);
    expect(await waitUntilGone(firstPid(failure.message))).toBe(true);
  }, 30_000);

  test('an action that succeeds and leaves a background child is done at once, and the child is left to run', async () => {
    const outcome = await actionApplier.apply(action({ argv: ['sh', '-c', 'sleep 60 & echo $!; echo started'], timeout_seconds: 30, guard: { creates: '/var/never' } }), ctx);
    expect(outcome.output).toMatch(/^\d+\nstarted\n$/);
    expect(processGone(firstPid(outcome.output ?? ''))).toBe(false);
  }, 30_000);
});

describe('actionApplier removal and adoption', () => {
  test('forgets an action on removal and undoes nothing', async () => {
    await actionApplier.apply(action(), ctx);
    expect(await actionApplier.remove('action:make-ca', ctx)).toBe('forgotten');
    expect((await stat(join(root, 'var/ca.pem'))).isFile()).toBe(true);
  });

  test('has no original to keep', async () => {
    expect(await actionApplier.keepOriginal(action(), ctx, join(root, 'originals'))).toBeUndefined();
  });
});
