import { execFileSync } from 'node:child_process';

// What an installed package's manual page and completions give a person on the machine: the
// page as the real man renders it, and the verbs the real bash and fish offer from the scripts.

/** The page at `file` (gzipped, as installed) rendered by man, 100 columns, without formatting. */
export function manRenders(file: string): string {
  return execFileSync('man', ['-l', file], { encoding: 'utf8', env: { ...process.env, MANWIDTH: '100', MAN_KEEP_FORMATTING: '', LANG: 'C.UTF-8' } });
}

/** What bash offers from the completion script at `file` for `binary` and the first word `word`. */
export function bashOffersFirstWord(file: string, binary: string, word: string): string[] {
  const fn = `_${binary.replace(/-/g, '_')}`;
  const out = execFileSync('bash', ['-c', `source "$1"; COMP_WORDS=("$2" "$3"); COMP_CWORD=1; ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', file, binary, word], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line !== '').sort();
}

/** What fish offers from the completion script at `file` for the command line `commandLine`. */
export function fishOffers(file: string, commandLine: string, home: string): string[] {
  const out = execFileSync('fish', ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', file, commandLine], { encoding: 'utf8', env: { ...process.env, HOME: home } });
  return out.split('\n').filter((line) => line !== '').map((line) => line.split('\t')[0] as string).sort();
}
