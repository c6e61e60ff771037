import { Report } from '../../../schema/report';
import type { ControllerContext } from '../controller-context';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { refreshPeers } from '../declarations/send-current';
import { meshTally } from '../metrics/mesh-tally';
import type { RecordReportResult } from '../store/reports.repo';
import { advanceOnReport, type Advance } from './advance-on-report';
import { recordNodeReport } from './record-node-report';
import { retireConfirmedCredentials } from '../provisions/retire-credentials';
import { messageOf } from '../../shared/message-of';
import { countReportRejection } from './report-refusals.repo';

/** What became of one message on a node's report subject. */
export type ReportReceived =
  | { kind: 'rejected'; node: string; reason: 'wrong_subject' | 'malformed'; detail: string }
  | { kind: 'recorded'; node: string; recorded: RecordReportResult; advance: Advance };

/**
 * Takes one report as it arrived on `mesh.node.<node>.report`. The broker lets a node publish
 * only under its own subjects, so the subject says who sent it: a report naming another node,
 * or not matching the contract, is refused and counted against the sender. Otherwise it goes
 * into the node's accounts (recordNodeReport: an older one is refused and counted there), and a
 * kept report moves the node along (advanceOnReport): overlay → full, final → released. When a
 * node was released, the others are sent their peers without it.
 *
 * A report in which the host refused a whole declaration (bad signature, another controller's
 * key, a stale epoch, an older generation…) is kept like any other and logged.
 */
export async function receiveReport(ctx: ControllerContext, subject: string, data: Uint8Array): Promise<ReportReceived> {
  const node = subject.split('.')[2] ?? '';
  const at = ctx.now();
  const rejected = async (reason: 'wrong_subject' | 'malformed', detail: string): Promise<ReportReceived> => {
    await countReportRejection(ctx.store, node, reason, at);
    meshTally(ctx).reportRefused(reason);
    ctx.log(`reports: a report on ${subject} refused (${reason}): ${detail}`, { level: 'warn', subject, reason });
    return { kind: 'rejected', node, reason, detail };
  };

  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return rejected('malformed', 'it is not JSON');
  }
  const parsed = Report.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return rejected('malformed', `${issue?.path.join('.') || 'the report'}: ${issue?.message ?? 'does not match the contract'}`);
  }
  const report = parsed.data;
  if (report.node !== node) return rejected('wrong_subject', `it names node ${report.node}`);

  const outcome = await nodeWorkQueue(ctx).run(node, async () => {
    const recorded = await recordNodeReport(ctx.store, report, at);
    if (!recorded.accepted) {
      meshTally(ctx).reportRefused(recorded.reason);
      ctx.log(`reports: node ${node}'s report (epoch ${report.epoch}, sequence ${report.sequence}, report ${report.report_sequence}) refused: ${recorded.reason}`, { level: 'warn', node, reason: recorded.reason });
      return { kind: 'recorded', node, recorded, advance: { kind: 'none' } } as const;
    }
    meshTally(ctx).reportKept();
    if (report.refused !== undefined) {
      meshTally(ctx).declarationRefused(report.refused.reason);
      ctx.log(`reports: node ${node} refused a declaration (${report.refused.reason}${report.refused.generation === undefined ? '' : `, generation ${report.refused.generation}`}${report.refused.detail === undefined ? '' : `: ${report.refused.detail}`})`, { level: 'warn', node, reason: report.refused.reason });
    }
    return { kind: 'recorded', node, recorded, advance: await advanceOnReport(ctx, report) } as const;
  });
  // Outside the node's queue: the others' queues are waited on here.
  if (outcome.advance.kind === 'released') await refreshPeers(ctx, node);
  // A consumer that applied a rotated credential lets its provider stop accepting the old one.
  if (outcome.recorded.accepted) {
    await retireConfirmedCredentials(ctx, report).catch((error: unknown) => {
      ctx.log(`provisions: node ${node}'s old credentials are still accepted: ${messageOf(error)}; the next report tries again`, { level: 'warn', node });
    });
  }
  return outcome;
}
