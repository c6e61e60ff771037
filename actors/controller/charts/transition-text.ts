/**
 * How a transition is named wherever people read it: on the state charts, in the names of the
 * generated path tests and in their coverage reports. One place, so a chart and a failing test
 * call the same edge the same thing.
 */

/**
 * Names an event type for a person: `operator.enrol` stays as it is, the outcome of an
 * invoked actor becomes `enrol.done` / `enrol.error`, a delay becomes `after 30 s` (or
 * `after releaseRetryDelay` when the delay is named), an eventless transition `always`.
 */
export function eventText(eventType: string): string {
  if (eventType === '') return 'always';
  const done = /^xstate\.done\.actor\.(.+)$/.exec(eventType);
  if (done) return `${done[1]}.done`;
  const error = /^xstate\.error\.actor\.(.+)$/.exec(eventType);
  if (error) return `${error[1]}.error`;
  const stateDone = /^xstate\.done\.state\.(.+)$/.exec(eventType);
  if (stateDone) return `${stateDone[1]}.done`;
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${delayText(after[1])}`;
  return eventType;
}

/** A delay as written on a chart: `500 ms`, `5 s`, `2 min`, or the name of a provided delay. */
export function delayText(delay: string | number): string {
  const ms = typeof delay === 'number' ? delay : /^\d+$/.test(delay) ? Number(delay) : undefined;
  if (ms === undefined) return String(delay);
  if (ms < 1000) return `${ms} ms`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

/**
 * A guard as a predicate a person can read: `hasAttemptsLeft`, `isRetryable and
 * hasAttemptsLeft`, `not isHalted`, `in enrolled.operating`. Inline functions show their name,
 * or `inline guard` when they have none.
 */
export function guardText(guard: unknown): string {
  if (guard === undefined || guard === null) return '';
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const combinator = guard as { name: string; guards?: unknown[]; stateValue?: unknown; check?: unknown };
    if (combinator.check !== undefined) {
      if (combinator.name === 'stateIn') return `in ${stateValueText(combinator.stateValue)}`;
      const parts = (combinator.guards ?? []).map((inner) => parenthesise(guardText(inner)));
      if (combinator.name === 'not') return `not ${parts[0] ?? ''}`;
      return parts.join(` ${combinator.name} `);
    }
    return combinator.name !== '' ? combinator.name : 'inline guard';
  }
  if (typeof guard === 'object' && 'type' in guard && typeof (guard as { type: unknown }).type === 'string') {
    return (guard as { type: string }).type;
  }
  return 'guard';
}

function parenthesise(text: string): string {
  return /\s/.test(text) ? `(${text})` : text;
}

function stateValueText(value: unknown): string {
  if (typeof value === 'string') return value.replace(/^#/, '');
  return JSON.stringify(value);
}
