import { HostState } from '../../../schema/host-state';
import { parseContract } from '../../../schema/parse';

type Field = keyof HostState;

const FIELDS = Object.keys(HostState.shape) as Field[];
const KNOWN = new Set<string>(FIELDS);

/**
 * Checks each state the host is about to write against the host-store contract, so a file that
 * would not load is never written. Most writes change one or two fields (a declaration taken, a
 * resource recorded, a counter), so a field whose JSON is the same as in the last state this
 * checker passed is not parsed again: the value parsed then is used. The fields are independent
 * in the contract (it has no rule across them), so checking the changed ones alone decides the
 * same as checking the whole. Comparing content rather than object identity keeps this right
 * when a caller changed an object in place.
 *
 * A state that fails is checked whole, so the error is the contract's own, naming the field.
 */
export class StateChecker {
  private readonly passed = new Map<Field, { json: string; value: unknown }>();

  /** The state as the contract parses it (defaults applied); throws ContractViolation when it breaks it. */
  check(state: HostState): HostState {
    const keys = Object.keys(state);
    if (keys.length !== FIELDS.length || keys.some((key) => !KNOWN.has(key))) return parseWhole(state);
    const parsed: Record<string, unknown> = {};
    const changed: Array<[Field, { json: string; value: unknown }]> = [];
    for (const field of FIELDS) {
      const value: unknown = state[field];
      const json = JSON.stringify(value);
      const seen = this.passed.get(field);
      if (seen !== undefined && seen.json === json) {
        parsed[field] = seen.value;
        continue;
      }
      const result = HostState.shape[field].safeParse(value);
      if (!result.success) return parseWhole(state);
      parsed[field] = result.data;
      changed.push([field, { json, value: result.data }]);
    }
    for (const [field, entry] of changed) this.passed.set(field, entry);
    return parsed as HostState;
  }
}

function parseWhole(state: HostState): HostState {
  return parseContract(HostState, state, 'host state');
}
