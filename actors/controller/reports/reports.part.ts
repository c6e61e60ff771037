import type { Msg } from '@nats-io/transport-node';
import { heartbeatSubject, reportSubject } from '../../shared/bus/subjects';
import type { ControllerContext } from '../controller-context';
import type { ControllerPart } from '../serve/controller-parts';
import { receiveHeartbeat } from './receive-heartbeat';
import { receiveReport } from './receive-report';

/** The queue group reports and heartbeats are taken in: with several controllers serving, one takes each. */
export const REPORTS_QUEUE = 'mesh-reports';

/**
 * The report receiver: every node's reports (`mesh.node.*.report`, receiveReport) and
 * heartbeats (`mesh.node.*.heartbeat`, receiveHeartbeat). Messages are taken side by side;
 * reports of one node are put in order by the node's work queue.
 */
export const reportsPart: ControllerPart = {
  name: 'reports',
  start: async (ctx) => {
    const underWay = new Set<Promise<unknown>>();
    const take = (what: string, handle: (ctx: ControllerContext, subject: string, data: Uint8Array) => Promise<unknown>) =>
      (error: Error | null, message: Msg): void => {
        if (error !== null) {
          ctx.log(`reports: ${what} subscription error: ${error.message}`, { level: 'error' });
          return;
        }
        const work = handle(ctx, message.subject, message.data)
          .catch((failure: unknown) => ctx.log(`reports: a ${what} on ${message.subject} could not be taken: ${(failure as Error)?.stack ?? String(failure)}`, { level: 'error', subject: message.subject }))
          .finally(() => underWay.delete(work));
        underWay.add(work);
      };
    const subscriptions = [
      ctx.nc.subscribe(reportSubject('*'), { queue: REPORTS_QUEUE, callback: take('report', receiveReport) }),
      ctx.nc.subscribe(heartbeatSubject('*'), { queue: REPORTS_QUEUE, callback: take('heartbeat', receiveHeartbeat) }),
    ];
    return {
      stop: async () => {
        await Promise.all(subscriptions.map((subscription) => (subscription.isClosed() ? undefined : subscription.drain().catch(() => undefined))));
        while (underWay.size > 0) await Promise.allSettled([...underWay]);
      },
    };
  },
};
