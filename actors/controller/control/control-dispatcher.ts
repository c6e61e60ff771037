import type { Msg, Subscription } from '@nats-io/transport-node';
import { ControlReply, ControlRequest } from '../../../schema/control';
import { CONTROL_SUBJECTS, controlSubject } from '../../shared/bus/subjects';
import { isOperatorError } from '../../shared/operator-error';
import type { ControllerContext } from '../controller-context';
import { ControlRequestMalformed, ControllerFault } from './control-errors';
import type { VerbRegistry } from './verb-registry';

/** The queue group control calls are taken in: with several controllers serving, one answers each call. */
export const CONTROL_QUEUE = 'mesh-control';

/** A dispatcher answering control calls; stop() stops taking calls and waits for those under way. */
export interface ControlDispatcher {
  stop(): Promise<void>;
}

/**
 * Answers the operator's CLI: every request on `mesh.control.>` is read as a ControlRequest,
 * its verb run through the registry, and the answer sent back as a ControlReply. An operator
 * error becomes `ok: false` with its condition, what, value and next step; any other failure is
 * logged in full here and answered as ControllerFault, so the CLI never waits for an answer that
 * will not come. Calls run side by side; each is logged in one line (never its arguments, which
 * may name secrets in later verbs).
 */
export function startControlDispatcher(ctx: ControllerContext, registry: VerbRegistry): ControlDispatcher {
  const underWay = new Set<Promise<void>>();
  const subscription: Subscription = ctx.nc.subscribe(CONTROL_SUBJECTS, {
    queue: CONTROL_QUEUE,
    callback: (error, message) => {
      if (error !== null) {
        ctx.log(`control: subscription error: ${error.message}`);
        return;
      }
      const call = answer(ctx, registry, message).finally(() => underWay.delete(call));
      underWay.add(call);
    },
  });
  return {
    stop: async () => {
      if (!subscription.isClosed()) await subscription.drain().catch(() => undefined);
      await Promise.allSettled([...underWay]);
    },
  };
}

async function answer(ctx: ControllerContext, registry: VerbRegistry, message: Msg): Promise<void> {
  const started = performance.now();
  const verbOfSubject = message.subject.slice(controlSubject('').length);
  if (!message.reply) {
    ctx.log(`control: ${verbOfSubject}: a call without a reply subject, ignored`);
    return;
  }
  let reply: ControlReply;
  let outcome: string;
  try {
    const request = readRequest(message);
    const answered = await registry.call(ctx, request.verb, request.args);
    reply = { ok: true, result: answered.result, text: answered.text };
    outcome = 'answered';
  } catch (error) {
    if (isOperatorError(error)) {
      reply = { ok: false, error: error.toJSON().error };
      outcome = `refused (${error.name})`;
    } else {
      ctx.log(`control: ${verbOfSubject} failed: ${(error as Error)?.stack ?? String(error)}`);
      reply = { ok: false, error: new ControllerFault(verbOfSubject, (error as Error)?.message ?? String(error)).toJSON().error };
      outcome = 'failed';
    }
  }
  ctx.log(`control: ${verbOfSubject} ${outcome} in ${Math.round(performance.now() - started)} ms`);
  try {
    message.respond(JSON.stringify(reply));
  } catch (error) {
    ctx.log(`control: ${verbOfSubject}: the answer could not be sent: ${(error as Error).message}`);
  }
}

function readRequest(message: Msg): ControlRequest {
  let json: unknown;
  try {
    json = message.json();
  } catch {
    throw new ControlRequestMalformed('it is not JSON');
  }
  const parsed = ControlRequest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ControlRequestMalformed(`${issue?.path.join('.') || 'the request'}: ${issue?.message ?? 'does not match'}`);
  }
  if (controlSubject(parsed.data.verb) !== message.subject) {
    throw new ControlRequestMalformed(`it names the verb ${parsed.data.verb} but was sent to ${message.subject}`);
  }
  return parsed.data;
}
