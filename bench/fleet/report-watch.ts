import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { parseContract } from '../../schema/parse';
import { Report } from '../../schema/report';
import { reportSubject } from '../../actors/shared/bus/subjects';

/** A report as it was received: when, and what it said. */
export interface ReceivedReport {
  at: number;
  report: Report;
}

/**
 * The controller's side of the reports, as far as a measurement needs it: every report on
 * `mesh.node.*.report`, read and checked against the contract as the controller's receiver
 * does, stamped with `performance.now()` on arrival and handed to whoever waits for that
 * node's report on that declaration.
 */
export class ReportWatch {
  private readonly waiting = new Map<string, (received: ReceivedReport) => void>();
  private readonly subscription: Subscription;
  /** Reports nobody was waiting for (a refusal, a second pass), kept for a failure message. */
  readonly unexpected: Report[] = [];

  constructor(nc: NatsConnection) {
    this.subscription = nc.subscribe(reportSubject('*'), {
      callback: (error, message) => {
        const at = performance.now();
        if (error !== null) return;
        const report = parseContract(Report, JSON.parse(message.string()), 'report');
        const key = keyOf(report.node, report.declaration_digest ?? '');
        const waiter = this.waiting.get(key);
        if (waiter === undefined || report.refused !== undefined) {
          if (this.unexpected.length < 20) this.unexpected.push(report);
          return;
        }
        this.waiting.delete(key);
        waiter({ at, report });
      },
    });
  }

  /** Resolves when `node` reports on the declaration with `digest`. Call before sending it. */
  expect(node: string, digest: string): Promise<ReceivedReport> {
    return new Promise((resolve) => this.waiting.set(keyOf(node, digest), resolve));
  }

  /** How many reports are still awaited. */
  get outstanding(): number {
    return this.waiting.size;
  }

  /** The nodes still awaited, for a message. */
  awaitedNodes(limit = 5): string[] {
    return [...this.waiting.keys()].slice(0, limit).map((key) => key.split(' ')[0] as string);
  }

  /** Forgets everyone still waiting (after a round's wait ran out), and goes on listening. */
  forgetAll(): void {
    this.waiting.clear();
  }

  /** Forgets everyone still waiting (after a timeout) and stops listening. */
  close(): void {
    this.waiting.clear();
    this.subscription.unsubscribe();
  }
}

function keyOf(node: string, digest: string): string {
  return `${node} ${digest}`;
}
