import type { HostState } from '../../../schema/host-state';

/** The part of the host's state handle report numbering needs (the real one is StateHandle). */
export interface NumberedState {
  update(change: (state: HostState) => HostState): Promise<HostState>;
}

/** Numbers reserved with one store write. */
export const REPORT_NUMBER_BLOCK = 64;

/**
 * Hands out report_sequence numbers so that the controller never sees one twice, even across a
 * crash, without a store write for every report: the store's `report_sequence` is the highest
 * number handed out *or reserved*, raised by a block of numbers in one durable write, and the
 * numbers of the block are then given from memory. A host that restarts begins above whatever
 * the store says, so it skips what the last one reserved and did not use: the controller orders
 * accounts by the numbers and refuses older ones, and a gap is neither.
 *
 * One per state handle (see {@link reportNumbersOf}): two of them over one store would each
 * hand out their own block, and the numbers would no longer rise in the order they are sent.
 */
export class ReportNumbers {
  private next = 0;
  private last = -1;
  private reserving: Promise<void> | undefined;

  constructor(private readonly state: NumberedState, private readonly block = REPORT_NUMBER_BLOCK) {}

  /** The next number, reserved in the store before it is returned. */
  async take(): Promise<number> {
    while (this.next > this.last) await this.reserveAhead();
    const number = this.next;
    this.next += 1;
    return number;
  }

  /** Makes sure at least one number is reserved; writes the store only when none is left. */
  async reserveAhead(): Promise<void> {
    if (this.next <= this.last) return;
    this.reserving ??= this.reserve().finally(() => {
      this.reserving = undefined;
    });
    await this.reserving;
  }

  private async reserve(): Promise<void> {
    const saved = await this.state.update((s) => ({ ...s, report_sequence: s.report_sequence + this.block }));
    this.next = saved.report_sequence - this.block + 1;
    this.last = saved.report_sequence;
  }
}

const numbering = new WeakMap<NumberedState, ReportNumbers>();

/** The one ReportNumbers of a state handle, made on first use. */
export function reportNumbersOf(state: NumberedState): ReportNumbers {
  let numbers = numbering.get(state);
  if (numbers === undefined) numbering.set(state, (numbers = new ReportNumbers(state)));
  return numbers;
}
