import type { Msg, Subscription } from '@nats-io/transport-node';
import { heartbeatSubject, reportSubject } from '../../shared/bus/subjects';
import type { ControllerContext } from '../controller-context';
import { receiveHeartbeat } from '../reports/receive-heartbeat';
import { receiveReport } from '../reports/receive-report';
import { REPORTS_QUEUE } from '../reports/reports.part';
import type { ControllerPart } from './controller-parts';

/** Told when something was heard from a node (a report taken, a heartbeat recorded). */
export type NodeNews = (what: string) => void;

/**
 * The report receiver: every node's reports on `mesh.node.*.report`, taken side by side (a
 * node's own are put in order by its work queue, see receiveReport), each telling `news` once
 * taken, so status is composed again.
 */
export function reportReceiverPart(news: NodeNews): ControllerPart {
  return subscriberPart('reports', 'report', reportSubject('*'), receiveReport, news);
}

/** The heartbeat tracker: every node's heartbeats on `mesh.node.*.heartbeat`, each recorded as last seen. */
export function heartbeatTrackerPart(news: NodeNews): ControllerPart {
  return subscriberPart('heartbeats', 'heartbeat', heartbeatSubject('*'), receiveHeartbeat, news);
}

function subscriberPart(
  name: string,
  what: string,
  subject: string,
  handle: (ctx: ControllerContext, subject: string, data: Uint8Array) => Promise<unknown>,
  news: NodeNews,
): ControllerPart {
  return {
    name,
    start: async (ctx) => {
      const underWay = new Set<Promise<unknown>>();
      const subscription: Subscription = ctx.nc.subscribe(subject, {
        queue: REPORTS_QUEUE,
        callback: (error: Error | null, message: Msg) => {
          if (error !== null) {
            ctx.log(`${name}: subscription error: ${error.message}`, { level: 'error', child: name });
            return;
          }
          const work = handle(ctx, message.subject, message.data)
            .then(() => news(`a ${what} on ${message.subject}`))
            .catch((failure: unknown) => ctx.log(`${name}: a ${what} on ${message.subject} could not be taken: ${(failure as Error)?.stack ?? String(failure)}`, { level: 'error', subject: message.subject }))
            .finally(() => underWay.delete(work));
          underWay.add(work);
        },
      });
      return {
        stop: async () => {
          if (!subscription.isClosed()) await subscription.drain().catch(() => undefined);
          while (underWay.size > 0) await Promise.allSettled([...underWay]);
        },
      };
    },
  };
}
