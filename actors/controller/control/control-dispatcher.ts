import type { Msg, Subscription } from '@nats-io/transport-node';
import { answerableReply, describeSender, fromOperator, requestSenderOf } from '../../shared/bus/answerable-reply';
import { ControlReply, ControlRequest } from '../../../schema/control';
import { CONTROL_SUBJECTS, controlSubject } from '../../shared/bus/subjects';
import { isOperatorError } from '../../shared/operator-error';
import type { ControllerContext } from '../controller-context';
import type { CallHandle, CallOutcome, CallRecorder } from './call-recorder';
import { ControlRequestMalformed, ControllerFault } from './control-errors';
import type { VerbRegistry } from './verb-registry';

/** The queue group control calls are taken in: with several controllers serving, one answers each call. */
export const CONTROL_QUEUE = 'mesh-control';

/** How long an acting verb may run before its caller is answered "running" with its call id. */
export const ANSWER_WITHIN_MS = 10_000;

/** A dispatcher answering control calls. */
export interface ControlDispatcher {
  /** Stops taking calls and waits for those under way (their records included). */
  stop(): Promise<void>;
  /**
   * Rejects if the subscription to control calls ends without stop() while the connection is
   * still open (the broker dropped it); never settles otherwise.
   */
  readonly failed: Promise<never>;
}

/** What the dispatcher does beyond answering. */
export interface ControlDispatcherOptions {
  /** Keeps every call of an acting verb (not of a query); without it, calls are answered and not kept. */
  calls?: CallRecorder;
  /** How long an acting verb may run before its caller is answered "running" (ANSWER_WITHIN_MS). */
  answerWithinMs?: number;
  /** Told after each acting verb ended, however it ended (status composes again). */
  onActed?(verb: string): void;
}

/**
 * Answers the operator's CLI: every request on `mesh.control.>` is read as a ControlRequest,
 * its verb run through the registry, and the answer sent back as a ControlReply. An operator
 * error becomes `ok: false` with its condition, what, value and next step; any other failure is
 * logged in full here and answered as ControllerFault, so the CLI never waits for an answer that
 * will not come. Calls run side by side; each is logged in one line (never its arguments, which
 * may name secrets in later verbs).
 *
 * A verb that acts (any registered verb not declared a query) gets a call id and is kept by
 * `calls`: begun running, ended with what its caller was given (but never an answer that
 * carries a secret, see VerbOptions.secretAnswer). Its caller is answered in full when it ends
 * within `answerWithinMs`, and otherwise at that moment with `{ call: { id, state: "running",
 * … } }`, the verb going on; `mesh-control calls ID` then says how it ended.
 */
export function startControlDispatcher(ctx: ControllerContext, registry: VerbRegistry, options: ControlDispatcherOptions = {}): ControlDispatcher {
  const underWay = new Set<Promise<void>>();
  let stopping = false;
  const subscription: Subscription = ctx.nc.subscribe(CONTROL_SUBJECTS, {
    queue: CONTROL_QUEUE,
    callback: (error, message) => {
      if (error !== null) {
        ctx.log(`control: subscription error: ${error.message}`, { level: 'error' });
        return;
      }
      const call = answer(ctx, registry, message, options).finally(() => underWay.delete(call));
      underWay.add(call);
    },
  });
  // A subscription that ends because the whole connection closed is the connection's failure,
  // for whoever watches it (the tree's bus child), not a failure of answering calls.
  const failed = subscription.closed.then((error): Promise<never> => {
    if (stopping || ctx.nc.isClosed()) return new Promise<never>(() => undefined);
    throw new Error(`the subscription to control calls (${CONTROL_SUBJECTS}) ended${error instanceof Error ? `: ${error.message}` : ''}`);
  });
  failed.catch(() => undefined);
  return {
    failed,
    stop: async () => {
      stopping = true;
      if (!subscription.isClosed()) await subscription.drain().catch(() => undefined);
      await Promise.allSettled([...underWay]);
    },
  };
}

async function answer(ctx: ControllerContext, registry: VerbRegistry, message: Msg, options: ControlDispatcherOptions): Promise<void> {
  const started = performance.now();
  const verbOfSubject = message.subject.slice(controlSubject('').length);
  if (!message.reply) {
    ctx.log(`control: ${verbOfSubject}: a call without a reply subject from ${describeSender(message)}, ignored`, { level: 'warn', verb: verbOfSubject });
    return;
  }
  if (!answerableReply(message.reply)) {
    // An answer published on a subject the caller chose would carry the controller's rights.
    ctx.log(`control: ${verbOfSubject}: refused a call from ${describeSender(message)} whose reply subject ${JSON.stringify(message.reply)} is not one the broker maps back to a caller; not answered`, { level: 'warn', verb: verbOfSubject });
    return;
  }
  let request: ControlRequest;
  try {
    request = readRequest(message);
  } catch (error) {
    respond(ctx, message, verbOfSubject, replyOf(ctx, verbOfSubject, error).reply);
    ctx.log(`control: ${verbOfSubject} refused (ControlRequestMalformed) in ${Math.round(performance.now() - started)} ms`, { level: 'warn', verb: verbOfSubject });
    return;
  }
  const acting = registry.has(request.verb) && !registry.isQuery(request.verb);
  const call: CallHandle | undefined = acting ? await options.calls?.begin(request.verb, Object.keys(request.args), callerOf(message)) : undefined;
  const callNote = call === undefined ? '' : ` (call ${call.id})`;

  const work = registry.call(ctx, request.verb, request.args).then(
    (answered): { reply: ControlReply; outcome: string; recorded: CallOutcome } => ({
      reply: { ok: true, result: answered.result, text: answered.text },
      outcome: 'answered',
      recorded: { state: 'answered', answer: answered },
    }),
    (error: unknown) => {
      const { reply, outcome, state } = replyOf(ctx, verbOfSubject, error);
      return { reply, outcome, recorded: { state, error: (reply as Extract<ControlReply, { ok: false }>).error } };
    },
  );
  const secret = registry.hasSecretAnswer(request.verb);
  const finish = work.then(async (done) => {
    ctx.log(`control: ${verbOfSubject}${callNote} ${done.outcome} in ${Math.round(performance.now() - started)} ms`, { level: done.outcome === 'answered' ? 'info' : 'warn', verb: verbOfSubject, outcome: done.outcome });
    await call?.end(secret && done.recorded.state === 'answered' ? { state: 'answered', answer: SECRET_NOT_KEPT } : done.recorded);
    if (acting) options.onActed?.(request.verb);
    return done;
  });
  // A secret answer can be read nowhere else, so its caller always waits for it.
  if (!acting || call === undefined || secret) {
    respond(ctx, message, verbOfSubject, (await finish).reply);
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), options.answerWithinMs ?? ANSWER_WITHIN_MS);
  });
  const first = await Promise.race([work, late]);
  clearTimeout(timer);
  if (first === 'late') {
    ctx.log(`control: ${verbOfSubject}${callNote} still running; its caller was given the call id`, { verb: verbOfSubject });
    respond(ctx, message, verbOfSubject, runningReply(request.verb, call.id, started));
    await finish;
    return;
  }
  respond(ctx, message, verbOfSubject, first.reply);
  await finish;
}

/** What a kept call holds instead of an answer that carried a secret. */
const SECRET_NOT_KEPT = {
  result: null,
  text: 'the answer carried a secret (such as a one-time token) and went to the caller only; it is not kept',
};

/** The answer to a caller whose acting verb is still running: its call id, and where to look. */
function runningReply(verb: string, id: string, started: number): ControlReply {
  const seconds = Math.round((performance.now() - started) / 1000);
  return {
    ok: true,
    result: { call: { id, verb, state: 'running' } },
    text: `\`${verb}\` is still running after ${seconds} s; it goes on as call ${id}.\nSee how it ends with: mesh-control calls ${id}`,
  };
}

function replyOf(ctx: ControllerContext, verb: string, error: unknown): { reply: ControlReply; outcome: string; state: 'refused' | 'failed' } {
  if (isOperatorError(error)) return { reply: { ok: false, error: error.toJSON().error }, outcome: `refused (${error.name})`, state: 'refused' };
  ctx.log(`control: ${verb} failed: ${(error as Error)?.stack ?? String(error)}`, { level: 'error', verb });
  return { reply: { ok: false, error: new ControllerFault(verb, (error as Error)?.message ?? String(error)).toJSON().error }, outcome: 'failed', state: 'failed' };
}

function respond(ctx: ControllerContext, message: Msg, verb: string, reply: ControlReply): void {
  try {
    message.respond(JSON.stringify(reply));
  } catch (error) {
    ctx.log(`control: ${verb}: the answer could not be sent: ${(error as Error).message}`, { level: 'warn', verb });
  }
}

/**
 * Who called: the operator's CLI by its inbox prefix (fromOperator), any other call of the
 * controller's own account (unstamped) a controller, and one from another account as the
 * broker stamped it (Nats-Request-Info).
 */
export function callerOf(message: Msg): string {
  const sender = requestSenderOf(message);
  if (sender !== undefined) return `${sender.user} (${sender.account})`;
  return fromOperator(message) ? 'operator' : 'controller';
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
