import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Reads a script's command line with node:util's parseArgs, strictly (an unknown option, a
 * missing value or a stray positional is refused), and says the usage with the refusal: parseArgs
 * alone names the problem but not the options there are.
 */
export function scriptArguments<const T extends Options>(argv: readonly string[], options: T, usage: string) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; usage: ${usage}`, { cause: error });
  }
}

/** A whole number, 1 or more, given to `option`; refuses anything else, quoting it. */
export function wholeNumberOption(option: string, value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new Error(`${option} is a whole number, 1 or more, not ${JSON.stringify(value)}`);
  return Number(value);
}
