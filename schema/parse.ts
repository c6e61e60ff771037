import * as z from 'zod';
import { OperatorError } from './operator-error';

/** One problem found in a contract value: where (`declaration.resources[2].mode`) and what. */
export interface ContractIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * A value read from the wire or from a file does not match its contract. The message names the
 * first failing field by its full path; every problem found is in `issues`. Nothing of the
 * value is quoted back, because some contracts (the host store, a pin) carry key material.
 */
export class ContractViolation extends OperatorError {
  /** The contract that was checked, e.g. `declaration`. */
  readonly contract: string;
  /** Every problem found, in the order the schema met them; never empty. */
  readonly issues: readonly ContractIssue[];

  constructor(contract: string, issues: readonly ContractIssue[], details: { next?: string; cause?: unknown } = {}) {
    const first = issues[0] ?? { path: contract, message: 'does not match its contract' };
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(`${first.path}: ${first.message}${more}`, {
      next: details.next ?? `Fix ${first.path}, or regenerate the ${contract} from its source, and try again.`,
      cause: details.cause,
    });
    this.contract = contract;
    this.issues = issues;
  }
}

/**
 * Parses `input` against `schema`, applying its defaults. Returns the parsed value or throws a
 * ContractViolation naming `contractName` and the first failing field path.
 */
export function parseContract<S extends z.ZodType>(
  schema: S,
  input: unknown,
  contractName: string,
  options: { next?: string } = {},
): z.output<S> {
  const result = schema.safeParse(input, { error: contractErrors });
  if (result.success) return result.data;
  const issues = result.error.issues.flatMap((issue) => describe(contractName, issue));
  throw new ContractViolation(contractName, issues, { next: options.next, cause: result.error });
}

// Zod's default wording ("Invalid input: expected string, received undefined") reads as a
// parser talking to itself; these say it the way a person fixing the field needs it. Messages
// set on a schema still win over these.
const contractErrors: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'required' : `expected ${issue.expected}, got ${kindOf(issue.input)}`;
    case 'invalid_value':
      if (issue.input === undefined) return 'required';
      return `expected ${issue.values.length === 1 ? '' : 'one of '}${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'unrecognized_keys':
      return 'unknown field: this contract does not carry it';
    case 'too_small':
      if (issue.minimum === 1 && (issue.origin === 'string' || issue.origin === 'array')) return 'must not be empty';
      return undefined;
    default:
      return undefined;
  }
};

function describe(contract: string, issue: z.core.$ZodIssue, base: readonly PropertyKey[] = []): ContractIssue[] {
  const at = [...base, ...issue.path];
  // An unknown field is reported on its parent object; name the field itself instead.
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: formatPath(contract, [...at, key]), message: issue.message }));
  }
  // A bad record key is wrapped; the key's own schema says what was wrong with it.
  if (issue.code === 'invalid_key') {
    return [{ path: formatPath(contract, at), message: issue.issues[0]?.message ?? issue.message }];
  }
  // When one alternative came clearly closest (fewest problems), its problems say more than
  // "expected one of these": `guard.creates: expected an absolute path`.
  if (issue.code === 'invalid_union') {
    const closest = closestAlternative(issue.errors);
    if (closest !== undefined) return closest.flatMap((inner) => describe(contract, inner, at));
  }
  return [{ path: formatPath(contract, at), message: issue.message }];
}

function closestAlternative(alternatives: readonly (readonly z.core.$ZodIssue[])[]): readonly z.core.$ZodIssue[] | undefined {
  const counts = alternatives.map((issues) => issues.length);
  const fewest = Math.min(...counts);
  return counts.filter((count) => count === fewest).length === 1 ? alternatives[counts.indexOf(fewest)] : undefined;
}

/** `contract.field[2].other`, with keys that are not plain identifiers written `["a b"]`. */
export function formatPath(contract: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    const name = String(key);
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `${text}.${name}` : `${text}[${JSON.stringify(name)}]`;
  }, contract);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
