import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createMachine, SimulatedClock } from 'xstate';
import { FakeChild, settle } from './fake-child';
import { runRootSupervisor } from './run-root-supervisor';
import { supervise } from './supervise';
import { SupervisorEscalated } from './supervisor-escalated';

/** Records what the process would have done instead of exiting. */
class FakeExit {
  readonly calls: Array<{ code: number; message: string }> = [];
  readonly exit = (code: number, message: string): void => {
    this.calls.push({ code, message });
  };
}

function hostTree(fetcher: FakeChild, link: FakeChild, maxRestarts: number) {
  return supervise({
    name: 'host',
    maxRestarts,
    windowMs: 10_000,
    backoff: { baseMs: 100, maxMs: 1_000 },
    children: [
      { id: 'fetcher', logic: fetcher.logic, restart: 'permanent' },
      { id: 'link', logic: link.logic, restart: 'permanent' },
    ],
  });
}

describe('runRootSupervisor', () => {
  it('stops every child and exits 1 naming the child and its last error when the root gives up', async () => {
    const fetcher = new FakeChild();
    const link = new FakeChild();
    const exit = new FakeExit();
    const order: string[] = [];
    const clock = new SimulatedClock();
    const root = runRootSupervisor(hostTree(fetcher, link, 1), {
      clock,
      exit: (code, message) => {
        order.push('exit');
        exit.exit(code, message);
      },
      onEscalate: (escalation) => {
        order.push(`escalate ${escalation.report.child} (link stopped: ${link.current.stopped})`);
      },
    });
    fetcher.current.fail('connection refused');
    await settle();
    clock.increment(100);
    fetcher.current.fail('certificate expired');
    const outcome = await root.done;

    expect(outcome).toMatchObject({ outcome: 'escalated', child: 'fetcher', error: 'certificate expired' });
    expect(link.current.stopped).toBe(true);
    expect(fetcher.running + link.running).toBe(0);
    expect(order).toEqual(['escalate fetcher (link stopped: true)', 'exit']);
    expect(exit.calls).toHaveLength(1);
    expect(exit.calls[0]?.code).toBe(1);
    expect(exit.calls[0]?.message).toContain('supervisor "host" gave up on child "fetcher" after more than 1 restart in 10000 ms');
    expect(exit.calls[0]?.message).toContain('certificate expired');
    expect(exit.calls[0]?.message).toMatch(/^next: /m);
  });

  it('names the nested child and its error when a nested supervisor made the root give up', async () => {
    const reader = new FakeChild();
    const exit = new FakeExit();
    const clock = new SimulatedClock();
    const store = supervise({
      name: 'store',
      maxRestarts: 0,
      windowMs: 1_000,
      backoff: { baseMs: 10, maxMs: 10 },
      children: [{ id: 'reader', logic: reader.logic, restart: 'permanent' }],
    });
    const root = runRootSupervisor(
      supervise({ name: 'host', maxRestarts: 0, windowMs: 1_000, backoff: { baseMs: 10, maxMs: 10 }, children: [{ id: 'store', logic: store, restart: 'permanent' }] }),
      { clock, exit: exit.exit },
    );
    reader.current.fail('disk full');
    await root.done;
    expect(exit.calls[0]?.message).toContain('gave up on child "store"');
    expect(exit.calls[0]?.message).toContain('gave up on reader after more than 0 restarts in 1000 ms: disk full');
  });

  it('hands onEscalate an operator error carrying the report', async () => {
    const fetcher = new FakeChild();
    const seen: SupervisorEscalated[] = [];
    const root = runRootSupervisor(hostTree(fetcher, new FakeChild(), 0), {
      clock: new SimulatedClock(),
      exit: new FakeExit().exit,
      onEscalate: (escalation) => {
        seen.push(escalation);
      },
    });
    fetcher.current.fail('boom');
    await root.done;
    expect(seen[0]).toBeInstanceOf(SupervisorEscalated);
    expect(seen[0]?.report.error).toBe('boom');
    expect(seen[0]?.exitCode).toBe(1);
  });

  it('stops every child cleanly on stop() and does not exit', async () => {
    const fetcher = new FakeChild();
    const link = new FakeChild();
    const exit = new FakeExit();
    const root = runRootSupervisor(hostTree(fetcher, link, 3), { clock: new SimulatedClock(), exit: exit.exit });
    const outcome = await root.stop();
    expect(outcome).toEqual({ outcome: 'stopped', child: 'host' });
    expect(fetcher.current.stopped).toBe(true);
    expect(link.current.stopped).toBe(true);
    expect(exit.calls).toEqual([]);
  });

  it('reads an actor stopped from outside as stopped, and does not exit', async () => {
    const child = new FakeChild();
    const exit = new FakeExit();
    const root = runRootSupervisor(hostTree(child, new FakeChild(), 3), { clock: new SimulatedClock(), exit: exit.exit });
    root.actor.stop();
    expect(await root.done).toEqual({ outcome: 'stopped', child: 'host' });
    expect(child.current.stopped).toBe(true);
    expect(exit.calls).toEqual([]);
  });

  it('still exits when onEscalate throws', async () => {
    const fetcher = new FakeChild();
    const exit = new FakeExit();
    const root = runRootSupervisor(hostTree(fetcher, new FakeChild(), 0), {
      clock: new SimulatedClock(),
      exit: exit.exit,
      onEscalate: () => {
        throw new Error('could not close the bus');
      },
    });
    fetcher.current.fail('boom');
    await expect(root.done).rejects.toThrow('could not close the bus');
    expect(exit.calls.map((call) => call.code)).toEqual([1]);
  });

  it('exits non-zero when the root itself breaks', async () => {
    const exit = new FakeExit();
    const broken = createMachine({
      id: 'broken',
      entry: () => {
        throw new Error('tree misconfigured');
      },
    });
    const root = runRootSupervisor(broken, { clock: new SimulatedClock(), exit: exit.exit });
    expect(await root.done).toEqual({ outcome: 'failed', child: 'broken', error: 'tree misconfigured' });
    expect(exit.calls[0]?.code).toBe(1);
    expect(exit.calls[0]?.message).toContain('tree misconfigured');
  });
});

describe('exitProcess', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'exit-process-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the message to stderr, ending the line, and exits with the code', () => {
    const script = join(dir, 'exit.ts');
    const module = resolve(__dirname, 'run-root-supervisor');
    writeFileSync(script, `import { exitProcess } from ${JSON.stringify(module)};\nexitProcess(3, 'error: supervisor gave up');\nprocess.stdout.write('still running');\n`);
    const run = spawnSync(process.execPath, [resolve(__dirname, '../../../scripts/run-ts.cjs'), script], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stderr).toBe('error: supervisor gave up\n');
    expect(run.stdout).toBe('');
  });
});
