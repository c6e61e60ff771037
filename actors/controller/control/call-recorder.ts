import type { ControlReply } from '../../../schema/control';
import type { VerbAnswer } from './verb-registry';

/** How an acting verb's call ended, as the dispatcher tells its recorder. */
export type CallOutcome =
  | { state: 'answered'; answer: VerbAnswer }
  | { state: 'refused' | 'failed'; error: Extract<ControlReply, { ok: false }>['error'] };

/** One call under way: its id, and how to say how it ended. */
export interface CallHandle {
  readonly id: string;
  /** Records how the call ended; never throws (a record that cannot be written is logged). */
  end(outcome: CallOutcome): Promise<void>;
}

/**
 * Keeps acting verbs' calls (actors/controller/calls/call-log.ts): the dispatcher begins one
 * per call of an acting verb and ends it with the answer the caller was given.
 */
export interface CallRecorder {
  /** Begins a call; never throws (the id is given even when the record cannot be written). */
  begin(verb: string, args: readonly string[], caller: string): Promise<CallHandle>;
}
