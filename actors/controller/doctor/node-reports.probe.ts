import { readDeclarationDelivery } from '../status/read-declaration-delivery';
import type { Sql } from '../store/sql-store';
import { failed, passed, type DoctorProbe } from './doctor-probe';

/**
 * Ten minutes: how long a connected node may take to report on its latest declaration before it
 * is behind. Right after a push every node is outstanding, and that is no fault.
 */
export const REPORT_GRACE_MS = 10 * 60_000;

/**
 * Every node's last report against its latest declaration (readDeclarationDelivery, as status
 * reads it): a failure when a node reported something failed, refused it, or is connected and
 * has not reported on it for longer than `graceMs`. A node away is not behind: it reports when
 * it is back, and its absence is status's and presence's to say.
 */
export function nodeReportsProbe(store: Sql, now: () => Date, graceMs: number = REPORT_GRACE_MS): DoctorProbe {
  return {
    name: 'node-reports',
    whenCannotRun: 'check that the store answers (the store probe), then run mesh-control doctor again',
    run: async () => {
      const { outstanding, failed: reportedFailed } = await readDeclarationDelivery(store);
      const at = now().getTime();
      const behind = outstanding.nodes.filter((node) => node.lifecycle_state === 'enrolled' && at - Date.parse(node.sent_at) > graceMs);
      const away = outstanding.nodes.filter((node) => node.lifecycle_state !== 'enrolled').length;
      const wrong = [
        ...reportedFailed.nodes.map((node) => `${node.node} ${node.refused === null ? `reported ${node.failed} resource(s) failed in generation ${node.generation}` : `refused generation ${node.generation} (${node.refused})`}`),
        ...behind.map((node) => `${node.node} has not reported on generation ${node.generation}, sent at ${node.sent_at}, while connected`),
      ];
      if (wrong.length > 0 || reportedFailed.count > reportedFailed.nodes.length) {
        const more = reportedFailed.count - reportedFailed.nodes.length;
        return failed(`${wrong.join('; ')}${more > 0 ? `; and ${more} more failed (mesh-control nodes)` : ''}`, 'see mesh-control nodes --dir DIR for what failed or why it was refused; a behind node that is connected: look at its host log (nox-mesh-host status on the node)');
      }
      return passed(`no node reported a failure or a refusal, none connected is behind${outstanding.count > 0 ? ` (${outstanding.count} outstanding: ${away} away, the rest sent within ${graceMs / 60_000} min)` : ''}`);
    },
  };
}
