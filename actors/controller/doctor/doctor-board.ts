import type { ControllerLog } from '../logs/log-fields';
import type { DoctorReport, DoctorSummary, ProbeResult } from '../../../schema/doctor';

/**
 * The serving controller's last doctor run, kept above the doctor's child of the tree so a
 * restart of the child does not forget it, and what status shows of it. Says each probe that
 * does not pass once per change (a new verdict or a new detail), and a probe passing again once,
 * not the same line every run.
 */
export class DoctorBoard {
  #last: DoctorReport | undefined;
  readonly #said = new Map<string, string>();

  constructor(
    private readonly log: ControllerLog,
    private readonly onChange: () => void = () => undefined,
  ) {}

  /** Keeps `report` as the last run (unless a run started later was kept already), logs what changed since the run before, and tells status when anything did. */
  publish(report: DoctorReport): void {
    // Runs overlap (the verb runs afresh beside a periodic run): one that started earlier and
    // ended later does not replace what was seen since.
    if (this.#last !== undefined && Date.parse(report.at) < Date.parse(this.#last.at)) return;
    let changed = this.#last === undefined;
    const seen = new Set<string>();
    for (const result of report.probes) {
      seen.add(result.probe);
      const before = this.#said.get(result.probe);
      if (result.verdict === 'pass') {
        if (before !== undefined) {
          this.log(`doctor: ${result.probe} passes again: ${result.detail}`, { probe: result.probe });
          this.#said.delete(result.probe);
          changed = true;
        }
        continue;
      }
      const key = `${result.verdict}\n${result.detail}`;
      if (before === key) continue;
      this.log(`doctor: ${result.probe} ${result.verdict}: ${result.detail}; next: ${result.next ?? 'none'}`, { level: result.verdict === 'warn' ? 'warn' : 'error', probe: result.probe, verdict: result.verdict });
      this.#said.set(result.probe, key);
      changed = true;
    }
    // A probe no longer run is no longer failing.
    for (const probe of [...this.#said.keys()].filter((name) => !seen.has(name))) this.#said.delete(probe);
    this.#last = report;
    if (changed) this.onChange();
  }

  /** The last run, or undefined before the first ended. */
  last(): DoctorReport | undefined {
    return this.#last;
  }

  /** What status carries: when the last run was, and its probes not passing; null before the first. */
  summary(): DoctorSummary | null {
    if (this.#last === undefined) return null;
    const failing: ProbeResult[] = this.#last.probes.filter((result) => result.verdict !== 'pass');
    return { at: this.#last.at, failing };
  }
}
