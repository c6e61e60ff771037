import path from 'node:path';
import * as fs from '../../../shared/fs/promised-fs';
import type { RunOptions, RunResult } from '../../../shared/process/command-runner';
import { describeFailure, succeeded } from '../../../shared/process/command-runner';
import type { ApplyContext } from '../applier';
import { ApplyFailed } from '../applier';
import { pathExists } from '../path-exists';
import { requireRan, SERVICE_COMMAND_TIMEOUT_MS } from './run-checked';
import type { ServiceDefinition } from './service-definition';
import { readServiceDefinition, SERVICE_ENABLED_DIR, serviceDefinitionPath, serviceEnabledMarkerPath, servicePidfilePath } from './service-definition';
import { kindOf, lstatOrAbsent, resolveUnderRoot } from '../root-path';
import type { ServiceBackend, ServiceStatus } from './service-backend';
import { monotonicMs } from '../../../shared/time/monotonic-ms';

/** Options for {@link startStopDaemonBackend}. */
export interface StartStopDaemonBackendOptions {
  /** Debian's start-stop-daemon (from dpkg); found on {@link SERVICE_PATH} unless told. */
  program?: string;
  /** How long a stop may take; the retry schedule itself is TERM, 5 s, KILL, 5 s. */
  timeoutMs?: number;
  /** How long a started process has to become the declared executable before the start fails. */
  startWaitMs?: number;
}

/** The PATH given to start-stop-daemon and to the services it starts. */
export const SERVICE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

// How long a started program must stay running to count as started.
const STAYING_MS = 100;

// `start-stop-daemon --status` exit codes (start-stop-daemon(8)).
const STATUS_RUNNING = 0;
const STATUS_DEAD_PIDFILE = 1;
const STATUS_NOT_RUNNING = 3;

/**
 * Services on a machine without a booted init, through Debian's `start-stop-daemon`. A service
 * is described by a definition file the installer writes (see `ServiceDefinition`):
 * `<root>/etc/mesh-host/services/<name>.json`. The process is started in the background with a
 * pidfile the backend makes, asked after with `--status`, and stopped with TERM, then KILL.
 *
 * **Enabled is only a record.** There is no init here to start anything at boot, so enabling
 * writes `<root>/etc/mesh-host/services/enabled/<name>` and nothing more: a service marked
 * enabled starts at boot only if whatever boots the machine (an entrypoint, rc.local) starts
 * the marked ones. The host's own reconcile does start a service declared running after a
 * reboot, since it is then observed stopped.
 *
 * The root places the files this backend reads and writes (definition, pidfile, marker). The
 * process itself runs on this machine with its own paths: it is not chrooted.
 */
export function startStopDaemonBackend(options: StartStopDaemonBackendOptions = {}): ServiceBackend {
  const program = options.program ?? 'start-stop-daemon';
  const timeoutMs = options.timeoutMs ?? SERVICE_COMMAND_TIMEOUT_MS;
  const startWaitMs = options.startWaitMs ?? 5000;

  const run = (ctx: ApplyContext, argv: readonly string[], extra: RunOptions = {}): Promise<RunResult> =>
    ctx.runner.run([program, ...argv], {
      timeoutMs,
      env: { PATH: SERVICE_PATH },
      ...extra,
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    });

  const definitionOf = async (name: string, ctx: ApplyContext): Promise<ServiceDefinition> => {
    const definition = await readServiceDefinition(ctx.root, name);
    if (definition !== undefined) return definition;
    throw new ApplyFailed(`no such service: there is no definition at ${serviceDefinitionPath(ctx.root, name)}`);
  };

  // Matching by the executable as well as the pidfile: a pid in a stale pidfile may since have
  // been given to an unrelated process, which must never be reported as the service or stopped.
  const match = (name: string, ctx: ApplyContext, definition: ServiceDefinition): string[] => [
    '--pidfile',
    servicePidfilePath(ctx.root, name, definition),
    '--exec',
    definition.exec[0] as string,
  ];

  const isRunning = async (name: string, ctx: ApplyContext, definition: ServiceDefinition): Promise<boolean> => {
    const result = requireRan(await run(ctx, ['--status', ...match(name, ctx, definition)]));
    if (result.code === STATUS_RUNNING) return true;
    if (result.code === STATUS_DEAD_PIDFILE || result.code === STATUS_NOT_RUNNING) return false;
    throw new ApplyFailed(`cannot tell whether ${name} is running: ${describeFailure(result)}`);
  };

  return {
    manager: 'start-stop-daemon',

    async status(name, ctx): Promise<ServiceStatus> {
      const definition = await readServiceDefinition(ctx.root, name);
      if (definition === undefined) return { exists: false, running: false, enabled: false };
      return {
        exists: true,
        running: await isRunning(name, ctx, definition),
        enabled: await pathExists(serviceEnabledMarkerPath(ctx.root, name)),
      };
    },

    async start(name, ctx) {
      const definition = await definitionOf(name, ctx);
      const pidfile = servicePidfilePath(ctx.root, name, definition);
      await fs.mkdir(path.dirname(pidfile), { recursive: true });
      const account = definition.user === undefined
        ? definition.group === undefined ? [] : ['--group', definition.group]
        : ['--chuid', definition.group === undefined ? definition.user : `${definition.user}:${definition.group}`];
      const argv = [
        '--start', '--background', '--make-pidfile', '--oknodo',
        ...match(name, ctx, definition),
        ...account,
        ...(definition.directory === undefined ? [] : ['--chdir', definition.directory]),
        '--', ...definition.exec.slice(1),
      ];
      // The service gets its definition's environment, not the host's (which is the host's business).
      const result = await run(ctx, argv, { replaceEnv: true, env: { PATH: SERVICE_PATH, ...definition.env } });
      if (!succeeded(result)) throw new ApplyFailed(describeFailure(result));
      // With --background, start-stop-daemon returns once it has forked: the pidfile may name a
      // child that has not yet become the program, or one whose program failed to run. Wait
      // until the pid really is the program, so a start that did not take fails here, saying so.
      // Seen twice, 100 ms apart: a program that exits at once is the program for a moment too.
      const deadline = monotonicMs() + startWaitMs;
      const runningAndStaying = async (): Promise<boolean> => {
        if (!(await isRunning(name, ctx, definition))) return false;
        await delay(STAYING_MS, ctx.signal);
        return isRunning(name, ctx, definition);
      };
      while (!(await runningAndStaying())) {
        if (monotonicMs() > deadline) {
          throw new ApplyFailed(
            `${name} is not running ${startWaitMs / 1000} s after start-stop-daemon started it: ` +
              `run ${JSON.stringify(definition.exec)} by hand to see why it exits`,
          );
        }
        await delay(50, ctx.signal);
      }
    },

    async stop(name, ctx) {
      const definition = await definitionOf(name, ctx);
      const result = await run(ctx, ['--stop', ...match(name, ctx, definition), '--retry', 'TERM/5/KILL/5', '--oknodo', '--remove-pidfile']);
      if (!succeeded(result)) throw new ApplyFailed(describeFailure(result));
    },

    async enable(name, ctx) {
      await definitionOf(name, ctx);
      // Resolved as a declared file is, and created, never written through what is there: a
      // link put at the marker's name would otherwise have the host write where it leads.
      const marker = await resolveUnderRoot(ctx, path.posix.join(SERVICE_ENABLED_DIR, name));
      await fs.mkdir(path.dirname(marker), { recursive: true });
      try {
        await fs.writeFile(marker, `${name} is to be started at boot; nothing starts it but the boot script that reads this folder\n`, { flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const there = await lstatOrAbsent(marker);
        if (there !== undefined && !there.isFile()) {
          throw new ApplyFailed(`${kindOf(there)} is at ${marker}, where the host marks ${name} enabled; remove it by hand`);
        }
      }
    },

    async disable(name, ctx) {
      await fs.rm(await resolveUnderRoot(ctx, path.posix.join(SERVICE_ENABLED_DIR, name)), { force: true });
    },
  };
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => { clearTimeout(timer); reject(signal?.reason); };
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
