import { nkeyAuthenticator, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { Envelope } from '../../schema/envelope';
import { parseContract } from '../../schema/parse';
import { Report } from '../../schema/report';
import { loadControllerConfig } from '../../actors/controller/config/load-controller-config';
import { readNkeySeedFile } from '../../actors/controller/config/nkey-seed-file';
import { connectPinned } from '../../actors/shared/bus';
import { declarationSubject, reportSubject } from '../../actors/shared/bus/subjects';
import { envelopeDigest } from '../../actors/shared/crypto';

/** A message seen on the bus, stamped with `performance.now()` on arrival. */
export interface Seen<T> {
  at: number;
  value: T;
}

/**
 * A listener on a running mesh's broker, connected as the controller's own broker user (read
 * from the mesh directory, pinned like every other connection), beside the serving controller:
 * it sees every declaration the controller publishes and every report a node sends, as they
 * pass, without taking them from anyone (plain subscriptions, outside the controller's queue
 * group). What a benchmark times the real processes by.
 */
export class MeshWatch {
  private readonly reports: Array<Seen<Report>> = [];
  private readonly declarations: Array<Seen<{ node: string; digest: string }>> = [];
  private readonly subscriptions: Subscription[];
  private readonly wakers = new Set<() => void>();

  private constructor(readonly nc: NatsConnection) {
    const wake = (): void => {
      for (const waker of [...this.wakers]) waker();
    };
    this.subscriptions = [
      nc.subscribe(reportSubject('*'), {
        callback: (error, message) => {
          const at = performance.now();
          if (error !== null) return;
          this.reports.push({ at, value: parseContract(Report, JSON.parse(message.string()), 'report') });
          wake();
        },
      }),
      nc.subscribe(declarationSubject('*'), {
        callback: (error, message) => {
          const at = performance.now();
          if (error !== null) return;
          const envelope = parseContract(Envelope, JSON.parse(message.string()), 'envelope');
          this.declarations.push({ at, value: { node: message.subject.split('.')[2] ?? '', digest: envelopeDigest(envelope) } });
          wake();
        },
      }),
    ];
  }

  /** Connects to the broker of the mesh in `meshDir` as its controller user. */
  static async open(meshDir: string): Promise<MeshWatch> {
    const config = await loadControllerConfig(meshDir);
    const controller = await readNkeySeedFile(config.controller.nkey_seed_file);
    const nc = await connectPinned(config.broker.url, config.broker.fingerprint, { authenticator: nkeyAuthenticator(controller.seed), name: 'bench watch' });
    return new MeshWatch(nc);
  }

  /** The first report after mark `from` (a count of reports seen) that `holds`. */
  report(holds: (report: Report) => boolean, options: { from?: number; timeoutMs?: number } = {}): Promise<Seen<Report>> {
    return this.first(this.reports, (seen) => holds(seen.value), options, 'a report');
  }

  /** The first declaration published after mark `from` for `node`. */
  declaration(node: string, options: { from?: number; timeoutMs?: number } = {}): Promise<Seen<{ node: string; digest: string }>> {
    return this.first(this.declarations, (seen) => seen.value.node === node, options, `a declaration for ${node}`);
  }

  /** Marks to pass as `from`: how many reports and declarations have been seen so far. */
  mark(): { reports: number; declarations: number } {
    return { reports: this.reports.length, declarations: this.declarations.length };
  }

  async close(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    await this.nc.close().catch(() => undefined);
  }

  private first<T>(list: Array<Seen<T>>, holds: (seen: Seen<T>) => boolean, options: { from?: number; timeoutMs?: number }, what: string): Promise<Seen<T>> {
    const from = options.from ?? 0;
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = list.slice(from).find(holds);
        if (found === undefined) return;
        finish();
        resolve(found);
      };
      const finish = (): void => {
        clearTimeout(timer);
        this.wakers.delete(check);
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${what} did not pass on the broker within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.wakers.add(check);
      check();
    });
  }
}
