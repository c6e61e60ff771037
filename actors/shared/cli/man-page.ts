import type { VerbSpec } from './verb-specs';

/** What a CLI's manual page says beside its verbs. */
export interface ManPageFacts {
  binary: string;
  /** One line: what the program is. */
  summary: string;
  version: string;
  /** Paragraphs of the DESCRIPTION section. */
  description: string[];
  /** The exit statuses, as `--help` says them. */
  exitStatus: string;
  /** Environment variables the program reads, and what for. */
  environment: Array<[name: string, meaning: string]>;
  /** Other pages: name and section. */
  seeAlso: Array<[name: string, section: number]>;
}

/**
 * The manual page (man(7) macros) of a CLI, made from its verbs' own definitions: each verb's
 * usage line, description, options, details and examples are the text its `--help` prints, so
 * the two cannot disagree.
 */
export function manPage(facts: ManPageFacts, verbs: readonly VerbSpec[]): string {
  const lines = [
    `.TH ${roff(facts.binary.toUpperCase())} 1 "" "${roff(facts.binary)} ${roff(facts.version)}" "Novox Mesh"`,
    // No hyphenation or justification: an option or a path copied from the page must be whole.
    '.nr HY 0',
    '.ds AD l',
    '.nh',
    '.ad l',
    '.SH NAME',
    `${roff(facts.binary)} \\- ${roff(facts.summary)}`,
    '.SH SYNOPSIS',
    `.B ${roff(facts.binary)}`,
    '.I verb',
    '[\\fIoptions\\fR] [\\fIarguments\\fR]',
    '.SH DESCRIPTION',
    ...facts.description.flatMap((paragraph) => ['.PP', roff(paragraph)]),
    '.SH VERBS',
  ];
  for (const verb of verbs) {
    lines.push(`.SS ${roff(verb.words.join(' '))}`, '.PP', `.B ${roff(verb.usage)}`, '.PP', roff(verb.description));
    for (const option of verb.options) {
      lines.push('.TP', `.B ${roff([option.names.join(', '), option.value].filter(Boolean).join(' '))}`, roff(option.description));
    }
    // The exit statuses every verb's help ends with are said once, in their own section.
    const paragraphs = verb.details.split(/\n\s*\n/).filter((text) => text.trim() !== '' && !text.trim().startsWith('Exit status:'));
    for (const paragraph of paragraphs) lines.push('.PP', roff(paragraph.replace(/\s*\n\s*/g, ' ').trim()));
    for (const [label, commandLine] of verb.examples) lines.push('.PP', roff(label), '.RS', '.EX', roff(commandLine), '.EE', '.RE');
  }
  lines.push('.SH EXIT STATUS', roff(facts.exitStatus));
  if (facts.environment.length > 0) {
    lines.push('.SH ENVIRONMENT');
    for (const [name, meaning] of facts.environment) lines.push('.TP', `.B ${roff(name)}`, roff(meaning));
  }
  if (facts.seeAlso.length > 0) lines.push('.SH SEE ALSO', facts.seeAlso.map(([name, section]) => `.BR ${roff(name)} (${section})`).join(' ,\n'));
  return `${lines.join('\n')}\n`;
}

/**
 * Text as roff reads it literally: backslashes escaped, hyphens as the minus sign (options
 * copied from the page must stay `--dir`), and a line that would start with a control character
 * protected.
 */
function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .split('\n')
    .map((line) => (/^[.']/.test(line) ? `\\&${line}` : line))
    .join('\n');
}
