import type { ControllerContext } from '../controller-context';
import type { ControllerPart } from '../serve/controller-parts';
import { declareForNode, NodeDeclareArgs } from './declare-for-node';
import { nodeWorkQueue } from './node-work-queue';
import { sendCurrent } from './send-current';

/**
 * The verb `node.declare` (`mesh-control node declare NAME FILE`), and, at start, the overlay
 * of every node that enrolled but was never sent one (the controller stopped between answering
 * the machine and sending it).
 */
export const declarationsPart: ControllerPart = {
  name: 'declarations',
  start: async (ctx, verbs) => {
    verbs.register('node.declare', NodeDeclareArgs, async (ctx, args) => {
      const outcome = await declareForNode(ctx, args);
      const text =
        outcome.sent === null
          ? `node ${outcome.node}: ${outcome.resources} resource(s) declared; not sent yet: ${outcome.held}`
          : `node ${outcome.node}: ${outcome.resources} resource(s) declared; full declaration sent as generation ${outcome.sent.generation}`;
      return { result: outcome, text };
    });
    await sendMissingOverlays(ctx);
    return { stop: async () => nodeWorkQueue(ctx).idle() };
  },
};

/** Sends its overlay to every node that has had no declaration since it enrolled. */
export async function sendMissingOverlays(ctx: ControllerContext): Promise<string[]> {
  const rows = await ctx.store.query<{ name: string }>(
    `SELECT n.name FROM nodes n
     WHERE n.lifecycle_state IN ('enrolled', 'disconnected') AND n.release_generation IS NULL AND n.overlay_address IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM declarations d WHERE d.node = n.name AND d.sent_at >= n.enrolled_at)
     ORDER BY n.name`,
  );
  const sent: string[] = [];
  for (const { name } of rows) {
    try {
      if ((await nodeWorkQueue(ctx).run(name, () => sendCurrent(ctx, name))) !== undefined) sent.push(name);
    } catch (error) {
      ctx.log(`declarations: node ${name}'s overlay could not be sent: ${String(error)}`, { level: 'error', node: name });
    }
  }
  return sent;
}
