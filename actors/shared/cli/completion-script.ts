import type { VerbSpec } from './verb-specs';

/** The shells `completion` writes a script for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/**
 * The completion script of `binary` for `shell`: verbs word by word (`node` then `declare`),
 * each verb's options once its words are typed, and file names for an option's value or a
 * verb's arguments. zsh runs the bash script through its bashcompinit, the way zsh documents for
 * bash completions, so the two cannot drift apart.
 */
export function completionScript(binary: string, shell: CompletionShell, verbs: readonly VerbSpec[]): string {
  if (shell === 'fish') return fishScript(binary, verbs);
  const bash = bashScript(binary, verbs);
  if (shell === 'bash') return bash;
  return [
    `#compdef ${binary}`,
    `# zsh completion for ${binary}: add \`source <(${binary} completion zsh)\` to ~/.zshrc after compinit.`,
    'autoload -U +X bashcompinit && bashcompinit',
    bash,
  ].join('\n');
}

/** A shell word in single quotes. */
function quoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The options of any verb that take a value, so that their values are not read as verb words. */
function valuedOptions(verbs: readonly VerbSpec[]): string[] {
  return [...new Set(verbs.flatMap((verb) => verb.options.filter((option) => option.value !== undefined).flatMap((option) => option.names)))].sort();
}

function bashScript(binary: string, verbs: readonly VerbSpec[]): string {
  const fn = `_${binary.replace(/[^A-Za-z0-9]/g, '_')}`;
  const cases = verbs.map((verb) => `    ${quoted(verb.words.join(' '))}) echo ${quoted(verb.options.flatMap((option) => option.names).join(' '))} ;;`);
  return `# bash completion for ${binary}: add \`source <(${binary} completion bash)\` to ~/.bashrc,
# or save it as /usr/share/bash-completion/completions/${binary}.
${fn}_verbs=(${verbs.map((verb) => quoted(verb.words.join(' '))).join(' ')})
${fn}_valued=' ${valuedOptions(verbs).join(' ')} '
${fn}_options() {
  case "$1" in
${cases.join('\n')}
  esac
}
${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  local typed='' word verb best='' rest next candidates='' i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    if [[ $word == -* ]]; then
      [[ $${fn}_valued == *" $word "* ]] && ((i++))
      continue
    fi
    typed="$typed$word "
  done
  COMPREPLY=()
  if [[ $${fn}_valued == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return 0
  fi
  for verb in "\${${fn}_verbs[@]}"; do
    if [[ " $typed" == " $verb "* ]] && (( \${#verb} > \${#best} )); then best=$verb; fi
    if [[ " $verb " == " $typed"* ]]; then
      rest=" $verb "
      rest=\${rest#" $typed"}
      next=\${rest%% *}
      [[ -n $next ]] && candidates="$candidates $next"
    fi
  done
  if [[ $cur == -* ]]; then
    [[ -n $best ]] && COMPREPLY=($(compgen -W "$(${fn}_options "$best")" -- "$cur"))
  elif [[ -n $candidates ]]; then
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
  elif [[ -n $best ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}
complete -F ${fn} ${binary}
`;
}

function fishScript(binary: string, verbs: readonly VerbSpec[]): string {
  const fn = `__${binary.replace(/[^A-Za-z0-9]/g, '_')}`;
  const lines = [
    `# fish completion for ${binary}: \`${binary} completion fish > ~/.config/fish/completions/${binary}.fish\``,
    `set -g ${fn}_verbs ${verbs.map((verb) => quoted(verb.words.join(' '))).join(' ')}`,
    `set -g ${fn}_valued ${valuedOptions(verbs).map(quoted).join(' ')}`,
    `# The words typed so far that are not options or their values.`,
    `function ${fn}_typed`,
    `    set -l tokens (commandline -opc)`,
    `    set -e tokens[1]`,
    `    set -l typed`,
    `    set -l skip 0`,
    `    for token in $tokens`,
    `        if test $skip -eq 1`,
    `            set skip 0`,
    `        else if string match -q -- '-*' $token`,
    `            contains -- $token $${fn}_valued; and set skip 1`,
    `        else`,
    `            set -a typed $token`,
    `        end`,
    `    end`,
    `    string join ' ' -- $typed`,
    `end`,
    `# Whether exactly these words (and nothing more) are typed.`,
    `function ${fn}_typed_is`,
    `    set -l typed (${fn}_typed)`,
    `    test "$typed" = "$argv[1]"`,
    `end`,
    `# Whether the longest verb the typed words start with is this one.`,
    `function ${fn}_verb_is`,
    `    set -l typed " "(${fn}_typed)" "`,
    `    set -l best ''`,
    `    for verb in $${fn}_verbs`,
    `        if string match -q -- " $verb *" "$typed"; and test (string length -- "$verb") -gt (string length -- "$best")`,
    `            set best $verb`,
    `        end`,
    `    end`,
    `    test "$best" = "$argv[1]"`,
    `end`,
  ];
  const offered = new Set<string>();
  for (const verb of verbs) {
    verb.words.forEach((word, index) => {
      const before = verb.words.slice(0, index).join(' ');
      const key = `${before}|${word}`;
      if (offered.has(key)) return;
      offered.add(key);
      const last = index === verb.words.length - 1;
      lines.push(`complete -c ${binary} -f -n ${quoted(`${fn}_typed_is ${quoted(before)}`)} -a ${quoted(word)}${last ? ` -d ${quoted(firstLine(verb.description))}` : ''}`);
    });
    for (const option of verb.options) {
      const names = option.names.map((name) => (name.startsWith('--') ? `-l ${name.slice(2)}` : `-s ${name.slice(1)}`)).join(' ');
      lines.push(`complete -c ${binary} -n ${quoted(`${fn}_verb_is ${quoted(verb.words.join(' '))}`)} ${names}${option.value === undefined ? '' : ' -r'} -d ${quoted(firstLine(option.description))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A description as one line, as fish shows it beside a completion. */
function firstLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
