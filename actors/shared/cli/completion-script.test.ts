import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { controlCli } from '../../controller/cli/main';
import { hostCli } from '../../host/cli/main';
import { completionScript, type CompletionShell } from './completion-script';
import { verbSpecsOf } from './verb-specs';

// The completion scripts of both CLIs, loaded into the real bash, zsh and fish and asked what
// they offer after a command line typed so far, as a person pressing tab would.

const plain = { isTTY: false } as const;
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-completion-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Writes the script of `binary` for `shell` and returns its path. */
async function scriptFile(binary: 'mesh-control' | 'nox-mesh-host', shell: CompletionShell): Promise<string> {
  const cli = binary === 'mesh-control' ? controlCli(plain) : hostCli(undefined, plain);
  const file = path.join(dir, `${binary}.${shell}`);
  await fs.writeFile(file, completionScript(binary, shell, verbSpecsOf(cli)));
  return file;
}

/** What bash's completion offers for `words` (the last is the word being completed). */
async function bashOffers(binary: 'mesh-control' | 'nox-mesh-host', words: string[]): Promise<string[]> {
  const file = await scriptFile(binary, 'bash');
  const fn = `_${binary.replace(/-/g, '_')}`;
  const out = execFileSync('bash', ['-c', `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', file, binary, ...words], { cwd: dir, encoding: 'utf8' });
  return out.split('\n').filter((line) => line !== '').sort();
}

/** The same through zsh's bashcompinit, as `source <(… completion zsh)` loads it. */
async function zshOffers(binary: 'mesh-control', words: string[]): Promise<string[]> {
  const file = await scriptFile(binary, 'zsh');
  const fn = `_${binary.replace(/-/g, '_')}`;
  const out = execFileSync('zsh', ['-c', `autoload -U compinit && compinit -u -D; source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); emulate sh -c ${fn}; print -l -- $COMPREPLY`, 'zsh', file, binary, ...words], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOME: dir } });
  return out.split('\n').filter((line) => line !== '').sort();
}

/** What fish offers for a command line (`complete -C`), each completion's word without its description. */
async function fishOffers(binary: 'mesh-control', commandLine: string): Promise<string[]> {
  const file = await scriptFile(binary, 'fish');
  const out = execFileSync('fish', ['--no-config', '-c', `source $argv[1]; complete -C $argv[2]`, file, commandLine], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOME: dir } });
  return out.split('\n').filter((line) => line !== '').map((line) => line.split('\t')[0] as string).sort();
}

describe('bash completion', () => {
  test('offers the first word of every verb', async () => {
    const offers = await bashOffers('mesh-control', ['']);
    expect(offers).toEqual(expect.arrayContaining(['assign', 'completion', 'doctor', 'node', 'nodes', 'plans', 'push', 'status', 'token', 'version']));
    expect(offers).not.toContain('declare');
  });

  test('goes on word by word through a verb of several', async () => {
    expect(await bashOffers('mesh-control', ['node', ''])).toEqual(['declare', 'release', 'revoke']);
    expect(await bashOffers('mesh-control', ['node', 'r'])).toEqual(['release', 'revoke']);
  });

  test("offers a verb's own options once its words are typed, after an option's value too", async () => {
    expect(await bashOffers('mesh-control', ['token', 'issue', '--'])).toEqual(['--dir', '--json', '--new', '--node', '--ttl']);
    expect(await bashOffers('mesh-control', ['--dir', '/srv/mesh', 'nodes', '--l'])).toEqual(['--limit']);
  });

  test('offers file names for the value of an option that takes one', async () => {
    await fs.writeFile(path.join(dir, 'web.json'), '{}');
    expect(await bashOffers('mesh-control', ['node', 'declare', '--dir', 'web'])).toEqual(['web.json']);
  });

  test("the host's script completes the host's verbs", async () => {
    expect(await bashOffers('nox-mesh-host', ['re'])).toEqual(['reconcile']);
    expect(await bashOffers('nox-mesh-host', ['apply', '--'])).toEqual(['--dry-run', '--json', '--replace', '--root', '--state-dir']);
  });
});

describe('zsh completion', () => {
  // scripts/ensure-system.sh installs zsh and fish; a machine without them fails here rather than skipping.
  test('offers the same as bash, through bashcompinit', async () => {
    expect(await zshOffers('mesh-control', ['node', ''])).toEqual(['declare', 'release', 'revoke']);
    expect(await zshOffers('mesh-control', ['plans', 'show', '--'])).toEqual(['--dir', '--json']);
  });
});

describe('fish completion', () => {
  test('offers verbs word by word and their options', async () => {
    expect(await fishOffers('mesh-control', 'mesh-control node ')).toEqual(['declare', 'release', 'revoke']);
    expect(await fishOffers('mesh-control', 'mesh-control token issue --')).toEqual(['--dir', '--json', '--new', '--node', '--ttl']);
    expect(await fishOffers('mesh-control', 'mesh-control pl')).toEqual(['plans']);
  });
});
