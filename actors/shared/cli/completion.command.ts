import { Command, Option, UsageError } from 'clipanion';
import type { CommandClass } from 'clipanion';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from './completion-script';
import { MeshCommand, type CommandResult } from './mesh-command';
import { verbSpecsOf } from './verb-specs';

/**
 * The `completion SHELL` verb of a CLI: prints the completion script for its verbs as they are
 * registered in this very binary, so a script can never offer a verb or option it lacks.
 */
export function completionCommand(binary: string): CommandClass {
  return class CompletionCommand extends MeshCommand {
    static override paths = [['completion']];
    static override usage = Command.Usage({
      description: 'Print the shell completion script for bash, zsh or fish',
      details: `
        Prints a script that completes ${binary}'s verbs, word by word, and each verb's
        options. Load it from your shell's start-up file, or save it where the shell looks for
        completions. Under --json the script is the document's \`script\`.
      `,
      examples: [
        ['Complete in bash (add this line to ~/.bashrc)', `source <(${binary} completion bash)`],
        ['Complete in zsh (add this line to ~/.zshrc, after compinit)', `source <(${binary} completion zsh)`],
        ['Complete in fish', `${binary} completion fish > ~/.config/fish/completions/${binary}.fish`],
      ],
    });

    shell = Option.String({ name: 'SHELL' });

    async run(): Promise<CommandResult> {
      if (!(COMPLETION_SHELLS as readonly string[]).includes(this.shell)) {
        throw new UsageError(`There is no completion for the shell "${this.shell}": name one of ${COMPLETION_SHELLS.join(', ')}, as in \`${binary} completion bash\`.`);
      }
      const script = completionScript(binary, this.shell as CompletionShell, verbSpecsOf(this.cli));
      return { text: script, json: { shell: this.shell, script } };
    }
  };
}
