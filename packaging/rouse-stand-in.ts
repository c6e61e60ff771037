import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';

/** The packaging folder: the scripts under test are run from here, as shipped. */
export const PACKAGING = __dirname;

/** Where the packages install the shared rouse helper; the resume unit and the hooks call it there. */
export const ROUSE_INSTALLED = '/usr/lib/nox-mesh-host/nox-mesh-host-rouse';

// The stand-in records each SIGUSR1 as a line, and each SIGUSR2 (sent only by the test) as a
// mark. A script's signal is sent before the script exits and SIGUSR1 is delivered before a
// later or simultaneous SIGUSR2, so once the mark after a run is recorded, every rouse that run
// caused is recorded too: "not signalled" needs no sleep.
const STAND_IN_SOURCE = `'use strict';
const fs = require('node:fs');
const log = process.argv[2];
process.on('SIGUSR1', () => fs.appendFileSync(log, 'rouse\\n'));
process.on('SIGUSR2', () => fs.appendFileSync(log, 'mark\\n'));
fs.appendFileSync(log, 'ready\\n');
setInterval(() => {}, 1 << 30);
`;

let recorders = 0;

/** Output and exit status of one run of a packaging script. */
export interface ScriptRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * A real process standing in for the node host, or for a process that must be left alone: it
 * counts the SIGUSR1 it receives. Its command line is chosen by the caller, since that is what
 * the rouse helper judges.
 */
export class SignalRecorder {
  private constructor(
    private readonly child: ChildProcess,
    private readonly log: string,
  ) {}

  /** The process id, as a pidfile would hold it. */
  get pid(): number {
    if (this.child.pid === undefined) throw new Error('the stand-in has no pid');
    return this.child.pid;
  }

  /**
   * Starts `node <script>` where the script is written at `scriptPath`, or, with `argv0`, runs
   * node under that name (a symbolic link to it), the shape of a single-file host binary.
   */
  static async start(dir: string, scriptPath: string, argv0?: string): Promise<SignalRecorder> {
    await fs.mkdir(path.dirname(scriptPath), { recursive: true });
    await fs.writeFile(scriptPath, STAND_IN_SOURCE);
    let executable = process.execPath;
    if (argv0 !== undefined) {
      await fs.mkdir(path.dirname(argv0), { recursive: true });
      await fs.symlink(process.execPath, argv0);
      executable = argv0;
    }
    recorders += 1;
    const log = path.join(dir, `${path.basename(scriptPath)}.${recorders}.signals`);
    const child = spawn(executable, [scriptPath, log], { stdio: 'ignore' });
    const recorder = new SignalRecorder(child, log);
    await recorder.until(() => recorder.lines().includes('ready'), 'the stand-in to install its handlers');
    return recorder;
  }

  /** The process's argv, read back from /proc as the rouse helper reads it. */
  cmdline(): string[] {
    return readFileSync(`/proc/${this.pid}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '');
  }

  /** How many SIGUSR1 it has received. */
  rouses(): number {
    return this.lines().filter((line) => line === 'rouse').length;
  }

  /** Waits until every SIGUSR1 sent before this call has been recorded. */
  async settle(): Promise<void> {
    const marks = this.marks();
    this.child.kill('SIGUSR2');
    await this.until(() => this.marks() > marks, 'the stand-in to record the mark');
  }

  /** Ends the process and waits until it has gone. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  private marks(): number {
    return this.lines().filter((line) => line === 'mark').length;
  }

  private lines(): string[] {
    try {
      return readFileSync(this.log, 'utf8').split('\n');
    } catch {
      return [];
    }
  }

  private async until(done: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 250; i += 1) {
      if (done()) return;
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`the stand-in ended (${this.child.exitCode ?? this.child.signalCode}) while waiting for ${what}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
}

/**
 * Runs a packaging script the way its caller does: executed directly (its `#!/bin/sh` line
 * chooses the shell), with only the given environment and PATH. It runs in a session of its
 * own, so a script that wrongly signalled its process group would hit itself, not the tests.
 */
export function runScript(script: string, args: string[], env: Record<string, string>): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(script, args, {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      timeout: 10_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}
