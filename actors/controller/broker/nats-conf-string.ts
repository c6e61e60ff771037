/**
 * A value as a nats-server configuration string: always double-quoted, so a path with spaces,
 * `#`, `$` (an unquoted `$name` is a variable reference) or a leading digit reads back as the
 * same text. Inside double quotes nats-server's lexer takes `\\`, `\"`, `\t`, `\n`, `\r` and
 * `\xHH`, and nothing else is special; other control characters are written as `\xHH`.
 *
 * Not for `include`: an include path is read up to the next quote with no escapes at all.
 */
export function natsString(value: string): string {
  let out = '"';
  for (const character of value) {
    const code = character.codePointAt(0) as number;
    if (character === '\\') out += '\\\\';
    else if (character === '"') out += '\\"';
    else if (character === '\n') out += '\\n';
    else if (character === '\r') out += '\\r';
    else if (character === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += character;
  }
  return `${out}"`;
}
