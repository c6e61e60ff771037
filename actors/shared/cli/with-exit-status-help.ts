import type { CommandClass } from 'clipanion';

/** The verb with `exitStatusHelp` at the end of its `--help` details, said once for all of a CLI's verbs. */
export function withExitStatusHelp(command: CommandClass, exitStatusHelp: string): CommandClass {
  const usage = command.usage ?? {};
  return class extends (command as unknown as new () => object) {
    static paths = command.paths;
    static usage = { ...usage, details: `${dedent(usage.details ?? '')}\n\n${exitStatusHelp}\n` };
  } as unknown as CommandClass;
}

/** Details without the indentation of the source they were written in, so a paragraph added after them reads as one. */
function dedent(text: string): string {
  const lines = text.split('\n');
  const indents = lines.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length);
  const common = indents.length === 0 ? 0 : Math.min(...indents);
  return lines.map((line) => line.slice(common)).join('\n').trim();
}
