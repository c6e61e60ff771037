import { promises as fs } from 'node:fs';
import type { Readable } from 'node:stream';
import { Command, Option } from 'clipanion';
import { bytesText } from '../../../schema/bounds';
import { ModuleName } from '../../../schema/module';
import { parseContract } from '../../../schema/parse';
import { MAX_SECRET_BYTES, SecretName } from '../../../schema/secret';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { callController } from '../control/call-controller';
import { SecretValueEmpty, SecretValueTooLarge } from '../secrets/secret-errors';
import { ControllerCommand } from './controller-command';

/** The value of `secret set` could not be read: a missing file, or a terminal on standard input. */
export class SecretValueNotGiven extends OperatorError {}

/** `mesh-control secret set MODULE NAME`: keep a secret a module's files may name. */
export class SecretSetCommand extends ControllerCommand {
  static override paths = [['secret', 'set']];
  static override usage = Command.Usage({
    description: "Keep a secret a module's files can name; its value from standard input or --from-file",
    details: `
      The value is read from standard input (piped, not typed: a terminal would show it) or from \`--from-file FILE\`, never from the command line, where the process list and the shell history would keep it. Its bytes are kept exactly, a trailing newline included: \`printf %s\` gives none, \`echo\` adds one. At most ${bytesText(MAX_SECRET_BYTES)}; an empty value is refused.

      The controller keeps it encrypted under the store key \`keys/secret-store.key\` in the mesh directory (made on the first \`secret set\`; back it up with the mesh directory: the database alone cannot give the value back). Setting it again makes a new version, sent at once to every node running a revision of the module that names it.

      A file resource in the module's module.json names it: \`{"shape": "file", "path": "/etc/app/db-password", "content": {"secret": "db-password"}, "owner": "app", "group": "app", "mode": "0600"}\`. Each node running the module is sent it sealed to its own key, and writes it with that owner and mode; a mode open to every account is refused.
    `,
    examples: [
      ['From a file', 'mesh-control secret set web db-password --from-file ./db-password.txt'],
      ['From a pipe, with no trailing newline', 'printf %s "$DB_PASSWORD" | mesh-control secret set web db-password --json'],
    ],
  });

  module = Option.String({ name: 'MODULE' });
  name = Option.String({ name: 'NAME' });
  fromFile = Option.String('--from-file', { description: 'Read the value from FILE instead of standard input' });
  // Caught here rather than left to the parser, which would print it back in its usage error.
  given = Option.Rest({ name: 'nothing else' });

  async run(): Promise<CommandResult> {
    if (this.given.length > 0) {
      throw new SecretValueNotGiven('secret set takes no value on the command line, and nothing was kept; what was given there is not repeated here', {
        next: 'give the value on standard input or with --from-file FILE; if that word was the value, it may be in your shell history: set a new one',
        exitCode: 2,
      });
    }
    const module = parseContract(ModuleName, this.module, 'module name', { next: 'give the module name as in its module.json' });
    const name = parseContract(SecretName, this.name, 'secret name', { next: 'give the name the module\'s file names in {"secret": NAME}' });
    const value = this.fromFile === undefined ? await readValueFromStdin(this.context.stdin, module, name) : await readValueFile(this.fromFile, module, name);
    try {
      const answer = await callController(this.meshDir(), 'secret.set', { module, name, value_base64: value.toString('base64') });
      return { text: answer.text, json: answer.result };
    } finally {
      value.fill(0);
    }
  }
}

/** `mesh-control secret unset MODULE NAME`. */
export class SecretUnsetCommand extends ControllerCommand {
  static override paths = [['secret', 'unset']];
  static override usage = Command.Usage({
    description: 'Forget a secret and every copy sealed from it',
    details: `
      Nodes keep the file they wrote until their next declaration; a module whose file still names the secret cannot be sent until it is set again or the file is taken out of the module.
    `,
    examples: [['Forget web\'s database password', 'mesh-control secret unset web db-password --json']],
  });

  module = Option.String({ name: 'MODULE' });
  name = Option.String({ name: 'NAME' });

  async run(): Promise<CommandResult> {
    const module = parseContract(ModuleName, this.module, 'module name', { next: 'give the module name as in its module.json' });
    const name = parseContract(SecretName, this.name, 'secret name', { next: 'list them with mesh-control secret list' });
    const answer = await callController(this.meshDir(), 'secret.unset', { module, name });
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control secret list [MODULE]`: names, versions, sizes and when set; never values. */
export class SecretListCommand extends ControllerCommand {
  static override paths = [['secret', 'list'], ['secrets']];
  static override usage = Command.Usage({
    description: 'List the secrets kept (names, versions, sizes, when set: never a value), and what the mesh can no longer seal to',
    details: `
      A node whose key died (a token was issued for it, or it was revoked) while it held a secret is listed under the secret, item by item, until it enrols again: nothing is sealed to a dead key.
    `,
    examples: [
      ['Every secret', 'mesh-control secret list'],
      ["One module's, for a script", 'mesh-control secret list web --json'],
    ],
  });

  module = Option.String({ name: 'MODULE', required: false });

  async run(): Promise<CommandResult> {
    const module = this.module === undefined ? undefined : parseContract(ModuleName, this.module, 'module name', { next: 'give the module name as in its module.json' });
    const answer = await callController(this.meshDir(), 'secret.list', module === undefined ? {} : { module });
    return { text: answer.text, json: answer.result };
  }
}

async function readValueFile(file: string, module: string, name: string): Promise<Buffer> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (error) {
    throw new SecretValueNotGiven('the file given with --from-file could not be read', { value: file, next: 'check the path and that the file is readable', cause: error });
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new SecretValueNotGiven('--from-file must name a regular file', { value: file, next: 'give the file holding the value' });
    if (stats.size > MAX_SECRET_BYTES) throw new SecretValueTooLarge(module, name, stats.size);
    const value = await handle.readFile();
    return checked(value, module, name);
  } finally {
    await handle.close();
  }
}

/**
 * Reads a secret's value from standard input: refused from a terminal (it would be shown as
 * typed), and no further than one byte past the bound, so a wrong file piped in is not read whole.
 */
export async function readValueFromStdin(stdin: Readable, module: string, name: string): Promise<Buffer> {
  if ((stdin as Readable & { isTTY?: boolean }).isTTY === true) {
    throw new SecretValueNotGiven('the value is read from standard input, which is a terminal here: what you typed would be shown', {
      next: `pipe it in (printf %s "$VALUE" | mesh-control secret set ${module} ${name}) or give --from-file FILE`,
    });
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    total += bytes.length;
    if (total > MAX_SECRET_BYTES) {
      for (const kept of chunks) kept.fill(0);
      throw new SecretValueTooLarge(module, name, total);
    }
    chunks.push(bytes);
  }
  const value = Buffer.concat(chunks);
  for (const kept of chunks) kept.fill(0);
  return checked(value, module, name);
}

function checked(value: Buffer, module: string, name: string): Buffer {
  if (value.length === 0) throw new SecretValueEmpty(module, name);
  if (value.length > MAX_SECRET_BYTES) throw new SecretValueTooLarge(module, name, value.length);
  return value;
}
