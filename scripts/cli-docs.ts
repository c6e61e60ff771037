/**
 * The manual page and the shell completions of one CLI, made from its verbs' own definitions at
 * package time, so what a package installs cannot disagree with the binary's `--help`. The page
 * is gzipped as Debian policy and makepkg's zipman want it, with no name or time in the header,
 * so the same version always gives the same bytes (the packages' md5sums stay reproducible).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { controllerManual } from '../actors/controller/cli/manual';
import { controlCli } from '../actors/controller/cli/main';
import { hostManual } from '../actors/host/cli/manual';
import { hostCli } from '../actors/host/cli/main';
import { completionScript, type CompletionShell } from '../actors/shared/cli/completion-script';
import { verbSpecsOf } from '../actors/shared/cli/verb-specs';

/** The two CLIs a package carries. */
export type CliName = 'nox-mesh-host' | 'mesh-control';

/** The files `writeCliDocs` makes for `binary`, by the name each has in the sources folder. */
export function cliDocFiles(binary: CliName): { man: string; bash: string; fish: string } {
  return { man: `${binary}.1.gz`, bash: `${binary}.bash`, fish: `${binary}.fish` };
}

/**
 * Writes `binary`'s gzipped manual page and its bash and fish completions into `dir`. Not zsh's:
 * it is bash's through bashcompinit, for `source <(… completion zsh)`, and a file autoloaded from
 * fpath would only register itself on its first use.
 */
export async function writeCliDocs(binary: CliName, dir: string): Promise<string[]> {
  const files = cliDocFiles(binary);
  const cli = binary === 'nox-mesh-host' ? hostCli(undefined, { isTTY: false }) : controlCli({ isTTY: false });
  const manual = binary === 'nox-mesh-host' ? hostManual() : controllerManual();
  const verbs = verbSpecsOf(cli);
  const written: Array<[string, Buffer | string]> = [
    [files.man, gzipSync(Buffer.from(manual, 'utf8'), { level: 9 })],
    ...(['bash', 'fish'] as const satisfies readonly CompletionShell[]).map((shell) => [files[shell], completionScript(binary, shell, verbs)] as [string, string]),
  ];
  await fs.mkdir(dir, { recursive: true });
  for (const [name, content] of written) await fs.writeFile(path.join(dir, name), content, { mode: 0o644 });
  return written.map(([name]) => path.join(dir, name));
}
