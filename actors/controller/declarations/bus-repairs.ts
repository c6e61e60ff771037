import type { ControllerLog } from '../logs/log-fields';
/**
 * What a repair of the bus put right: the declaration stream made again or brought back to its
 * settings, a node's consumer made again or replaced, a node's slot on the stream published
 * again (found missing or wrong on read-back), a node's declaration sent again because it
 * refused what its slot held, and such a re-send held back because the node refused too often.
 */
export type BusRepairKind = 'stream_created' | 'stream_updated' | 'consumer_created' | 'consumer_replaced' | 'slot_republished' | 'refusal_resent' | 'refusal_resend_withheld';

/** One repair, as the log and status say it. */
export interface BusRepair {
  kind: BusRepairKind;
  /** What it was about: `stream <name>` or `node <name>`. */
  subject: string;
  detail: string;
  at: Date;
}

/** The counts `mesh-control status` shows. */
export interface BusRepairCounts {
  /** Repairs made (re-sends held back are counted by kind only). */
  total: number;
  by_kind: Partial<Record<BusRepairKind, number>>;
  last: BusRepair | null;
}

/** How often a node's refusals may make the controller send it its declaration again. */
export interface ResendBound {
  /** At most this many re-sends per node… */
  limit: number;
  /** …within this window. */
  windowMs: number;
}

/** Three re-sends per node in ten minutes: enough for a slot broken twice, never a loop. */
export const RESEND_BOUND: ResendBound = { limit: 3, windowMs: 10 * 60_000 };

/**
 * The serving controller's account of its bus repairs since it started, and the allowance of
 * re-sends each node's refusals may cause. Every repair is a log line (through `log`) and a
 * count here; both are bounded (one entry per kind, one short list per node).
 */
export class BusRepairs {
  readonly #counts = new Map<BusRepairKind, number>();
  readonly #resends = new Map<string, number[]>();
  #last: BusRepair | null = null;

  constructor(
    private readonly log: ControllerLog,
    private readonly bound: ResendBound = RESEND_BOUND,
  ) {}

  /** Counts a repair and says it in the log. */
  record(repair: BusRepair): void {
    this.#counts.set(repair.kind, (this.#counts.get(repair.kind) ?? 0) + 1);
    this.#last = repair;
    this.log(`bus repair (${repair.kind.replaceAll('_', ' ')}): ${repair.subject}: ${repair.detail}`, { level: 'warn', repair: repair.kind });
  }

  /**
   * True, and the re-send counted against the node's allowance, when `node` may be sent its
   * declaration again at `at`; false once it had `limit` re-sends within the window.
   */
  takeResend(node: string, at: Date): boolean {
    const since = at.getTime() - this.bound.windowMs;
    const recent = (this.#resends.get(node) ?? []).filter((time) => time > since);
    if (recent.length >= this.bound.limit) {
      this.#resends.set(node, recent);
      return false;
    }
    recent.push(at.getTime());
    this.#resends.set(node, recent);
    return true;
  }

  /** The counts so far. */
  counts(): BusRepairCounts {
    const byKind: Partial<Record<BusRepairKind, number>> = Object.fromEntries(this.#counts);
    // A re-send held back is counted with the rest but is not a repair.
    const total = [...this.#counts].reduce((sum, [kind, count]) => (kind === 'refusal_resend_withheld' ? sum : sum + count), 0);
    return { total, by_kind: byKind, last: this.#last };
  }
}
