import type { HostKind } from '../../../schema/resource';
import { HEARTBEAT_PERIOD_MS } from '../../shared/heartbeat/heartbeat-period';
import { formatSpan } from '../nodes/format-span';
import type { ControllerPart } from '../serve/controller-parts';
import { markDisconnected } from './mark-disconnected';

/** 15 s: how often silence is judged, so a resident node (bound 90 s) is shown disconnected within two minutes. */
export const PRESENCE_CHECK_EVERY_MS = 15_000;

/** Options of {@link presencePart}. */
export interface PresenceOptions {
  /** How often silence is judged (PRESENCE_CHECK_EVERY_MS unless given). */
  everyMs?: number;
  /** The heartbeat period of each kind (HEARTBEAT_PERIOD_MS unless given; short in tests). */
  periods?: Readonly<Record<HostKind, number>>;
  /** Told when a node was shown disconnected, so status is composed again. */
  news?: (what: string) => void;
}

/**
 * The presence watch: at start and every `everyMs` after, shows `disconnected` every enrolled
 * node silent for three of its kind's heartbeat periods (markDisconnected; silence counted from
 * when this part started at the earliest, since no heartbeat was taken before), and logs each as a
 * fact. No alarm and no problem in status: being away is a state (seed 000). The heartbeat
 * that brings a node back is the heartbeat receiver's. One judgement at a time; one due while
 * another runs is skipped; one that failed is logged and tried again next time. Only while
 * this controller acts, under its epoch.
 */
export function presencePart(options: PresenceOptions = {}): ControllerPart {
  const everyMs = options.everyMs ?? PRESENCE_CHECK_EVERY_MS;
  const periods = options.periods ?? HEARTBEAT_PERIOD_MS;
  return {
    name: 'presence',
    start: async (ctx) => {
      // The heartbeat tracker starts before this part in the same child: silence before now is not the nodes'.
      const listeningSince = ctx.now();
      let running: Promise<void> | undefined;
      const judge = (): void => {
        if (running !== undefined || ctx.lease?.isActing() === false) return;
        running = (async () => {
          const now = ctx.now();
          const marked = await markDisconnected(ctx.store, now, ctx.epoch(), periods, listeningSince);
          for (const node of marked) {
            ctx.log(`presence: node ${node.name} (${node.host_kind}) is disconnected: not heard from since ${node.since.toISOString()} (${formatSpan(now.getTime() - node.since.getTime())}; its kind beats every ${formatSpan(periods[node.host_kind])})`, { level: 'warn', node: node.name, kind: node.host_kind });
          }
          if (marked.length > 0) options.news?.(`${marked.length} node(s) disconnected`);
        })()
          .catch((error: unknown) => ctx.log(`presence: could not judge which nodes are silent (tried again in ${formatSpan(everyMs)}): ${error instanceof Error ? error.message : String(error)}`, { level: 'error' }))
          .finally(() => {
            running = undefined;
          });
      };
      judge();
      const timer = setInterval(judge, everyMs);
      return {
        stop: async () => {
          clearInterval(timer);
          await running;
        },
      };
    },
  };
}
