import { StoredHostState } from '../../../schema/host-state';
import { parseContract } from '../../../schema/parse';

type Field = keyof StoredHostState;

const FIELDS = Object.keys(StoredHostState.shape) as Field[];
const KNOWN = new Set<string>(FIELDS);

/** What the checker keeps of a field that passed: its JSON as given, the value parsed, and that value as the file holds it. */
interface Passed {
  json: string;
  value: unknown;
  /** `  "field": value` as `JSON.stringify(state, null, 2)` writes it; empty for a field left undefined. */
  text: string;
}

/**
 * Checks each state the host is about to write against the host-store contract, as state.json
 * holds it (large values referred to: StoredHostState), so a file that would not load is never
 * written. Most writes change one or two fields (a declaration taken, a
 * resource recorded, a counter), so a field whose JSON is the same as in the last state this
 * checker passed is not parsed again, nor written out again: the value parsed then, and its
 * text, are used. The fields are independent in the contract (it has no rule across them), so
 * checking the changed ones alone decides the same as checking the whole. Comparing content
 * rather than object identity keeps this right when a caller changed an object in place.
 *
 * A state that fails is checked whole, so the error is the contract's own, naming the field.
 */
export class StateChecker {
  private readonly passed = new Map<Field, Passed>();

  /** The state as the contract parses it (defaults applied); throws ContractViolation when it breaks it. */
  check(state: StoredHostState): StoredHostState {
    return this.checked(state).state;
  }

  /**
   * The file's text for `state` as the contract parses it: the bytes of
   * `JSON.stringify(check(state), null, 2)` and a newline. Throws as check does.
   */
  serialize(state: StoredHostState): string {
    const { state: parsed, fields } = this.checked(state);
    if (fields === undefined) return `${JSON.stringify(parsed, null, 2)}\n`;
    const lines = fields.filter((entry) => entry.text !== '').map((entry) => entry.text);
    return lines.length === 0 ? '{}\n' : `{\n${lines.join(',\n')}\n}\n`;
  }

  private checked(state: StoredHostState): { state: StoredHostState; fields?: Passed[] } {
    const keys = Object.keys(state);
    if (keys.length !== FIELDS.length || keys.some((key) => !KNOWN.has(key))) return { state: parseWhole(state) };
    const parsed: Record<string, unknown> = {};
    const fields: Passed[] = [];
    const changed: Array<[Field, Passed]> = [];
    for (const field of FIELDS) {
      const value: unknown = state[field];
      const json = JSON.stringify(value);
      const seen = this.passed.get(field);
      if (seen !== undefined && seen.json === json) {
        parsed[field] = seen.value;
        fields.push(seen);
        continue;
      }
      const result = StoredHostState.shape[field].safeParse(value);
      if (!result.success) return { state: parseWhole(state) };
      parsed[field] = result.data;
      const entry: Passed = { json, value: result.data, text: fieldText(field, result.data) };
      fields.push(entry);
      changed.push([field, entry]);
    }
    for (const [field, entry] of changed) this.passed.set(field, entry);
    return { state: parsed as StoredHostState, fields };
  }
}

/** One field of the state as `JSON.stringify(state, null, 2)` writes it, nested one level. */
function fieldText(field: Field, value: unknown): string {
  const json = JSON.stringify(value, null, 2) as string | undefined;
  if (json === undefined) return '';
  return `  ${JSON.stringify(field)}: ${json.replaceAll('\n', '\n  ')}`;
}

function parseWhole(state: StoredHostState): StoredHostState {
  return parseContract(StoredHostState, state, 'host state');
}
