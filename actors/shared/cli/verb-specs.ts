import type { Cli } from 'clipanion';

/** What the verbs are read from: a Cli, or the one a running command is given. */
type Definitions = Pick<Cli, 'definitions'>;

/** One option of a verb, as its definition names it. */
export interface OptionSpec {
  /** Its names, long and short: `['--dir']`, `['-h', '--help']`. */
  names: string[];
  /** The placeholder of its value (`DIR`), or undefined for a flag. */
  value: string | undefined;
  description: string;
}

/** One verb of a CLI as completion and man pages see it: the words that name it and its options. */
export interface VerbSpec {
  /** The words after the binary's name: `['node', 'declare']`. */
  words: string[];
  /** Its usage line, placeholders named: `mesh-control node declare [--json] [--dir DIR] <NAME> <FILE>`. */
  usage: string;
  description: string;
  details: string;
  examples: Array<[label: string, commandLine: string]>;
  options: OptionSpec[];
}

/**
 * The verbs `cli` has registered, from clipanion's own definitions of them (the same text
 * `--help` prints), so that completion and the man page can never list what the verbs do not
 * take. Builtins that are only options (`-h`, `-v`) are left out.
 */
export function verbSpecsOf(cli: Definitions): VerbSpec[] {
  return cli
    .definitions()
    .map((definition) => ({
      words: definition.path.split(' ').slice(1),
      usage: definition.usage,
      description: (definition.description ?? '').trim(),
      details: (definition.details ?? '').trim(),
      examples: (definition.examples ?? []).map(([label, line]) => [label.trim(), line] as [string, string]),
      options: definition.options.map((option) => {
        const [names = '', ...value] = option.definition.split(' ');
        return { names: names.split(','), value: value.length === 0 ? undefined : value.join(' '), description: (option.description ?? '').trim() };
      }),
    }))
    .filter((verb) => verb.words.length > 0 && !verb.words[0]?.startsWith('-'))
    .sort((a, b) => a.words.join(' ').localeCompare(b.words.join(' ')));
}
