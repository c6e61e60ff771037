import type { CommandRunner, RunOptions, RunResult } from '../../../../shared/process/command-runner';

/** One unit as the fake systemd holds it. `state` is what `is-enabled` prints. */
export interface FakeUnit {
  running: boolean;
  state: 'enabled' | 'disabled' | 'static' | 'masked';
}

/**
 * A FAKE systemd for tests, standing in for a booted one (which cannot run here). It answers
 * the few `systemctl` verbs the systemd backend uses — `is-enabled`, `is-active`, `start`,
 * `stop`, `enable`, `disable` — the way systemctl 252 answers them (words, exit codes,
 * messages), keeps its units in memory, and records every argv it was asked to run in
 * `calls`, so a test can assert the exact commands.
 */
export class FakeSystemd implements CommandRunner {
  /** Every command asked of the fake, in order. */
  readonly calls: string[][] = [];
  private readonly units = new Map<string, FakeUnit>();

  /** `units` by full unit name (`nginx.service`). */
  constructor(units: Record<string, Partial<FakeUnit>> = {}) {
    for (const [name, unit] of Object.entries(units)) this.units.set(name, { running: false, state: 'disabled', ...unit });
  }

  /** The unit as the fake now holds it. */
  unit(name: string): FakeUnit | undefined {
    const unit = this.units.get(name);
    return unit === undefined ? undefined : { ...unit };
  }

  /** Someone ran `systemctl stop` by hand: drift the host has to notice. */
  stopByHand(name: string): void {
    const unit = this.units.get(name);
    if (unit !== undefined) unit.running = false;
  }

  async run(argv: readonly string[], _options?: RunOptions): Promise<RunResult> {
    this.calls.push([...argv]);
    const [program, ...rest] = argv;
    if (program !== 'systemctl') return result(argv, 127, '', `${program}: the fake systemd runs only systemctl`);
    const offline = rest[0]?.startsWith('--root=') === true;
    const [verb, unitName] = offline ? rest.slice(1) : rest;
    if (verb === undefined || unitName === undefined) return result(argv, 1, '', 'Too few arguments.');
    const unit = this.units.get(unitName);
    switch (verb) {
      case 'is-enabled':
        if (unit === undefined) return result(argv, 1, '', `Failed to get unit file state for ${unitName}: No such file or directory`);
        return result(argv, unit.state === 'enabled' || unit.state === 'static' ? 0 : 1, `${unit.state}\n`);
      case 'is-active':
        if (offline) return result(argv, 1, '', "Verb 'is-active' cannot be used with --root= or --image=.");
        return unit?.running === true ? result(argv, 0, 'active\n') : result(argv, 3, 'inactive\n');
      case 'start':
      case 'stop':
        if (offline) return result(argv, 1, '', `Verb '${verb}' cannot be used with --root= or --image=.`);
        if (unit === undefined) return result(argv, 5, '', `Failed to ${verb} ${unitName}: Unit ${unitName} not found.`);
        if (verb === 'start' && unit.state === 'masked') return result(argv, 1, '', `Failed to start ${unitName}: Unit ${unitName} is masked.`);
        unit.running = verb === 'start';
        return result(argv, 0, '');
      case 'enable':
      case 'disable':
        if (unit === undefined) return result(argv, 1, '', `Failed to ${verb} unit: Unit file ${unitName} does not exist.`);
        if (unit.state === 'enabled' || unit.state === 'disabled') unit.state = verb === 'enable' ? 'enabled' : 'disabled';
        return result(argv, 0, '');
      default:
        return result(argv, 1, '', `Unknown command verb ${verb}.`);
    }
  }
}

function result(argv: readonly string[], code: number, stdout: string, stderr = ''): RunResult {
  return { argv, code, signal: null, stdout, stderr, timedOut: false, durationMs: 0 };
}
