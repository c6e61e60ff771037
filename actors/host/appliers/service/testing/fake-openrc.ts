import type { CommandRunner, RunOptions, RunResult } from '../../../../shared/process/command-runner';

/** One service as the fake OpenRC holds it: running or not, and the runlevels it is in. */
export interface FakeOpenRcService {
  running: boolean;
  runlevels: string[];
}

/**
 * A FAKE OpenRC for tests, standing in for a booted Alpine or Gentoo (which cannot run here).
 * It answers the commands the OpenRC backend uses — `rc-service --exists NAME`,
 * `rc-service NAME status|start|stop`, `rc-update add|del|show` — with OpenRC's exit codes and
 * output shapes, keeps services in memory, and records every argv in `calls`.
 */
export class FakeOpenRc implements CommandRunner {
  /** Every command asked of the fake, in order. */
  readonly calls: string[][] = [];
  private readonly services = new Map<string, FakeOpenRcService>();

  constructor(services: Record<string, Partial<FakeOpenRcService>> = {}) {
    for (const [name, service] of Object.entries(services)) {
      this.services.set(name, { running: false, ...service, runlevels: [...(service.runlevels ?? [])] });
    }
  }

  /** The service as the fake now holds it. */
  service(name: string): FakeOpenRcService | undefined {
    const service = this.services.get(name);
    return service === undefined ? undefined : { running: service.running, runlevels: [...service.runlevels] };
  }

  /** Someone ran `rc-service NAME stop` by hand. */
  stopByHand(name: string): void {
    const service = this.services.get(name);
    if (service !== undefined) service.running = false;
  }

  async run(argv: readonly string[], _options?: RunOptions): Promise<RunResult> {
    this.calls.push([...argv]);
    const [program, ...rest] = argv;
    if (program === 'rc-service') return this.rcService(argv, rest);
    if (program === 'rc-update') return this.rcUpdate(argv, rest);
    return result(argv, 127, '', `${program}: the fake OpenRC runs only rc-service and rc-update`);
  }

  private rcService(argv: readonly string[], rest: string[]): RunResult {
    if (rest[0] === '--exists') return result(argv, rest[1] !== undefined && this.services.has(rest[1]) ? 0 : 1, '');
    const [name, verb] = rest;
    const service = name === undefined ? undefined : this.services.get(name);
    if (service === undefined) return result(argv, 1, '', ` * rc-service: service \`${name}' does not exist\n`);
    switch (verb) {
      case 'status':
        return service.running ? result(argv, 0, ' * status: started\n') : result(argv, 3, ' * status: stopped\n');
      case 'start':
      case 'stop':
        service.running = verb === 'start';
        return result(argv, 0, '', ` * ${verb === 'start' ? 'Starting' : 'Stopping'} ${name} ...\n`);
      default:
        return result(argv, 1, '', ` * ${name}: unknown function \`${verb}'\n`);
    }
  }

  private rcUpdate(argv: readonly string[], rest: string[]): RunResult {
    const [verb, ...args] = rest;
    if (verb === 'show') {
      const only = args[0];
      const lines = [...this.services.entries()]
        .filter(([, service]) => only === undefined || service.runlevels.includes(only))
        .map(([name, service]) => `${name.padStart(20)} | ${service.runlevels.join(' ')}`);
      return result(argv, 0, lines.length === 0 ? '' : `${lines.join('\n')}\n`);
    }
    const [name, runlevel] = args;
    const service = name === undefined ? undefined : this.services.get(name);
    if (service === undefined || runlevel === undefined) return result(argv, 1, '', ` * rc-update: service \`${name}' does not exist\n`);
    if (verb === 'add') {
      if (service.runlevels.includes(runlevel)) return result(argv, 0, '', ` * rc-update: ${name} already installed in runlevel \`${runlevel}'; skipping\n`);
      service.runlevels.push(runlevel);
      return result(argv, 0, ` * service ${name} added to runlevel ${runlevel}\n`);
    }
    if (verb === 'del') {
      if (!service.runlevels.includes(runlevel)) return result(argv, 1, '', ` * rc-update: service \`${name}' is not in the runlevel \`${runlevel}'\n`);
      service.runlevels = service.runlevels.filter((level) => level !== runlevel);
      return result(argv, 0, ` * service ${name} removed from runlevel ${runlevel}\n`);
    }
    return result(argv, 1, '', ` * rc-update: unknown command \`${verb}'\n`);
  }
}

function result(argv: readonly string[], code: number, stdout: string, stderr = ''): RunResult {
  return { argv, code, signal: null, stdout, stderr, timedOut: false, durationMs: 0 };
}
