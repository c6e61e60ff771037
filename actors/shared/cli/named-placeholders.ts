import type { Cli, CommandClass } from 'clipanion';

/**
 * What each option's value is, as usage lines say it. clipanion writes every option's value as
 * `#0`, which reads as nothing; an option missing here is named after the last word of its name.
 */
export const OPTION_PLACEHOLDERS: Readonly<Record<string, string>> = {
  '--dir': 'DIR',
  '--root': 'DIR',
  '--state-dir': 'DIR',
  '--bundle': 'FILE',
  '--broker-url': 'URL',
  '--database': 'URL',
  '--listen': 'HOST:PORT',
  '--metrics-listen': 'HOST:PORT',
  '--overlay-cidr': 'CIDR',
  '--after': 'NAME',
  '--node': 'NAME',
  '--limit': 'N',
  '--why': 'TEXT',
  '--ttl': 'DURATION',
  '--timeout': 'DURATION',
  '--for': 'DURATION',
  '--since': 'DURATION',
  '--token': 'TOKEN',
  '--condition': 'ID',
};

/** `--dir #0` as `--dir DIR`, in a usage line or an option's definition; anything else as it was. */
export function namePlaceholders(usage: string): string {
  return usage.replace(/(^|[\s[<,])(--?[A-Za-z][\w-]*)((?: #\d+)+)/g, (_whole, before: string, name: string, values: string) => {
    const word = OPTION_PLACEHOLDERS[name] ?? (name.replace(/^-+/, '').split('-').pop() ?? 'VALUE').toUpperCase();
    const count = values.trim().split(/\s+/).length;
    return `${before}${name}${` ${word}`.repeat(count)}`;
  });
}

/** The part of clipanion's per-verb builder that renders a usage line. */
interface UsageBuilder {
  usage(opts?: { detailed?: boolean; inlineOptions?: boolean }): { usage: string; options: Array<{ definition: string; description?: string; required: boolean }> };
}

/** The internals of a clipanion 3.2 Cli this reaches into: each verb's builder by its index. */
interface CliInternals {
  registrations: Map<CommandClass, { index: number }>;
  builder: { getBuilderByIndex(n: number): UsageBuilder };
}

const NAMED = Symbol('named placeholders');

/**
 * Makes every usage clipanion renders for `cli`'s registered verbs (help, a verb's `--help`,
 * the "did you mean" of an unknown command line, `definitions()`) name its option values.
 * Call it once every verb is registered. It wraps each verb's builder, which is where all of
 * those come from; the test beside this fails if a clipanion upgrade moves it.
 */
export function nameOptionPlaceholders<T extends Cli>(cli: T): T {
  const internals = cli as unknown as CliInternals;
  for (const { index } of internals.registrations.values()) {
    const builder = internals.builder.getBuilderByIndex(index) as UsageBuilder & { [NAMED]?: true };
    if (builder[NAMED]) continue;
    const usage = builder.usage.bind(builder);
    builder.usage = (opts) => {
      const rendered = usage(opts);
      return { usage: namePlaceholders(rendered.usage), options: rendered.options.map((option) => ({ ...option, definition: namePlaceholders(option.definition) })) };
    };
    builder[NAMED] = true;
  }
  return cli;
}
