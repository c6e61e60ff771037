import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { MachineFacts } from './bench-results';
import { describeMount } from './mount-of';

/** This machine, as a results file records it. */
export function machineFacts(): MachineFacts {
  return {
    cores: os.cpus().length,
    cpu_model: os.cpus()[0]?.model.trim() ?? 'unknown',
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    nats_server: ask('nats-server', ['--version']),
    os: osName(),
    work_file_system: describeMount(os.tmpdir()),
  };
}

function ask(program: string, args: string[]): string {
  try {
    return execFileSync(program, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    return `${program} could not be asked (${(error as Error).message.split('\n')[0]})`;
  }
}

function osName(): string {
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    return `${pretty?.[1] ?? os.type()} (kernel ${os.release()})`;
  } catch {
    return `${os.type()} ${os.release()}`;
  }
}
