import * as z from 'zod';
import { StoredHostState } from '../../../schema/host-state';
import { parseContract } from '../../../schema/parse';
import { vouchedSchemaOf } from '../../../schema/vouched';

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
 * The long lists (what the host owns, the hand-applied resources, the keys marked applying)
 * change by a batch of entries at a time, so they are checked entry by entry the same way: an
 * entry whose JSON passed in the last state is not parsed again, and the list's own rules (no
 * key twice) are checked over the whole list (see ListField).
 *
 * A state that fails is checked whole, so the error is the contract's own, naming the field.
 */
export class StateChecker {
  private readonly passed = new Map<Field, Passed>();
  /** The entries of each list field that passed in the last state, by their JSON. */
  private readonly entries = new Map<Field, Map<string, Entry>>();

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
    // A field the state leaves out is checked as undefined: an optional one (store_rebuilt_at,
    // absent on nearly every host) passes, a required one fails and the whole parse names it.
    // Requiring every key here sent each save of such a state through the whole parse.
    if (Object.keys(state).some((key) => !KNOWN.has(key))) return { state: parseWhole(state) };
    const parsed: Record<string, unknown> = {};
    const fields: Passed[] = [];
    const changed: Array<[Field, Passed]> = [];
    this.pendingEntries.clear();
    for (const field of FIELDS) {
      const value: unknown = state[field];
      const list = LIST_FIELDS.get(field);
      const items = list === undefined ? undefined : itemsOf(list, value);
      // A list's JSON is put together from its entries', which it needs anyway: the same text.
      const json = items === undefined ? JSON.stringify(value) : listJson(list as ListField, items.json);
      const seen = this.passed.get(field);
      if (seen !== undefined && seen.json === json) {
        if (seen.value !== undefined || Object.hasOwn(state, field)) parsed[field] = seen.value;
        fields.push(seen);
        continue;
      }
      const entry = items === undefined ? this.parsedField(field, value, json) : this.parsedList(field, list as ListField, items, json);
      if (entry === undefined) return { state: parseWhole(state) };
      if (entry.value !== undefined || Object.hasOwn(state, field)) parsed[field] = entry.value;
      fields.push(entry);
      changed.push([field, entry]);
    }
    for (const [field, entry] of changed) this.passed.set(field, entry);
    for (const [field, entries] of this.pendingEntries) this.entries.set(field, entries);
    this.pendingEntries.clear();
    return { state: parsed as StoredHostState, fields };
  }

  /** Entries of list fields that passed in the state being checked, kept once all of it has. */
  private readonly pendingEntries = new Map<Field, Map<string, Entry>>();

  private parsedField(field: Field, value: unknown, json: string): Passed | undefined {
    const result = StoredHostState.shape[field].safeParse(value);
    if (!result.success) return undefined;
    return { json, value: result.data, text: fieldText(field, result.data) };
  }

  /**
   * A list field checked entry by entry: each entry with the list's entry schema (or as it
   * passed before), then the list's own rules over the parsed entries. Undefined when anything
   * fails, or when the value is not the shape the list has (the whole parse then says why).
   */
  private parsedList(field: Field, list: ListField, items: Items, json: string): Passed | undefined {
    const known = this.entries.get(field);
    const now = new Map<string, Entry>();
    const values: unknown[] = [];
    const texts: string[] = [];
    const indent = ' '.repeat(list.inner === undefined ? 4 : 6);
    for (const [index, item] of items.values.entries()) {
      const itemJson = items.json[index] as string;
      let entry = now.get(itemJson) ?? known?.get(itemJson);
      if (entry === undefined) {
        // An entry the contract gave already (a declaration's resource, parsed as it was read)
        // and unchanged since: the parse would give it back as it is.
        const result = takesVouched(list.entry, vouchedSchemaOf(item, itemJson)) ? { success: true as const, data: item } : list.entry.safeParse(item);
        if (!result.success) return undefined;
        entry = { value: result.data, text: `${indent}${(JSON.stringify(result.data, null, 2) as string).replaceAll('\n', `\n${indent}`)}` };
      }
      now.set(itemJson, entry);
      values.push(entry.value);
      texts.push(entry.text);
    }
    const whole = list.rules.safeParse(values);
    if (!whole.success) return undefined;
    this.pendingEntries.set(field, now);
    const closing = ' '.repeat(indent.length - 2);
    const listText = texts.length === 0 ? '[]' : `[\n${texts.join(',\n')}\n${closing}]`;
    const parsedValue = list.inner === undefined ? whole.data : { [list.inner]: whole.data };
    const text = list.inner === undefined ? `  ${JSON.stringify(field)}: ${listText}` : `  ${JSON.stringify(field)}: {\n    ${JSON.stringify(list.inner)}: ${listText}\n  }`;
    return { json, value: parsedValue, text };
  }
}

/**
 * True when a value `vouched` gave passes `entry` as it is: `entry` is that schema, or a union
 * that tries it first (the host store's hand-applied resources: a resource, or a file whose
 * content is kept beside the store), whose parse then gives that schema's result.
 */
function takesVouched(entry: z.ZodType, vouched: z.ZodType | undefined): boolean {
  if (vouched === undefined) return false;
  return entry === vouched || (entry instanceof z.ZodUnion && entry.options[0] === vouched);
}

/** An entry of a list field that passed: its value parsed, and its text as the file holds it. */
interface Entry {
  value: unknown;
  text: string;
}

/**
 * A field of the state that is a list (`applying`), or an object holding only a list
 * (`owned`: `{resources: [...]}`), with the schema of one entry and the list's schema with its
 * entries taken as they come (its own rules alone, such as no key twice).
 */
interface ListField {
  inner?: string;
  entry: z.ZodType;
  rules: z.ZodType;
}

/** The list fields of the contract, found from its schemas, so they follow it. */
const LIST_FIELDS = new Map<Field, ListField>(FIELDS.flatMap((field): Array<[Field, ListField]> => {
  const list = listFieldOf(StoredHostState.shape[field] as z.ZodType);
  return list === undefined ? [] : [[field, list]];
}));

function listFieldOf(schema: z.ZodType): ListField | undefined {
  if (schema instanceof z.ZodArray) return { entry: schema.element as z.ZodType, rules: schema.clone({ ...schema._zod.def, element: z.unknown() }) as z.ZodType };
  // An object of one list and no rules of its own: checked as that list.
  if (schema instanceof z.ZodObject && (schema._zod.def.checks ?? []).length === 0) {
    const keys = Object.keys(schema.shape);
    const inner = schema.shape[keys[0] as string] as z.ZodType | undefined;
    if (keys.length !== 1 || !(inner instanceof z.ZodArray)) return undefined;
    const list = listFieldOf(inner);
    return list === undefined ? undefined : { ...list, inner: keys[0] as string };
  }
  return undefined;
}

/** A list field's entries and the JSON of each. */
interface Items {
  values: unknown[];
  json: string[];
}

/** The entries of a list field's value, or undefined when it is not the shape the list has. */
function itemsOf(list: ListField, value: unknown): Items | undefined {
  const values = list.inner === undefined ? value : onlyKey(value, list.inner);
  if (!Array.isArray(values)) return undefined;
  const json: string[] = [];
  for (const item of values) {
    const text = JSON.stringify(item) as string | undefined;
    // What JSON.stringify leaves out or writes as null in a list (undefined, a function): the
    // whole parse says what is wrong with it.
    if (text === undefined) return undefined;
    json.push(text);
  }
  return { values, json };
}

/** What JSON.stringify gives for the list field whose entries' JSON is `json`. */
function listJson(list: ListField, json: readonly string[]): string {
  const items = `[${json.join(',')}]`;
  return list.inner === undefined ? items : `{${JSON.stringify(list.inner)}:${items}}`;
}

/** The value of an object's only key `key`, or undefined when it has another key too or is not an object. */
function onlyKey(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === key ? (value as Record<string, unknown>)[key] : undefined;
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
