import { OperatorError } from '../operator-error';

/**
 * A key given in configuration, a file or a message is not a key of the expected kind. The
 * message names which key and its size; it never quotes the key, which may be secret.
 */
export class KeyMalformed extends OperatorError {
  constructor(which: string, problem: string, next = `check where ${which} came from; copy it again whole`) {
    super(`${which} is not usable: ${problem}`, { next });
  }
}

/** A key file is open to other users; a secret key must be readable by its owner alone. */
export class KeyFileTooOpen extends OperatorError {
  readonly path: string;
  constructor(path: string, mode: number) {
    super(`the key file is readable or writable by other users (mode ${(mode & 0o777).toString(8).padStart(3, '0')})`, {
      value: path,
      next: `chmod 600 ${path}   # then check nobody else copied the key while it was open`,
    });
    this.path = path;
  }
}

/** No key file where one was expected. */
export class KeyFileMissing extends OperatorError {
  readonly path: string;
  constructor(path: string, next: string) {
    super('there is no key file at this path', { value: path, next });
    this.path = path;
  }
}

/** A key file exists but does not hold one key of the expected size. */
export class KeyFileMalformed extends OperatorError {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`the key file does not hold a usable key (${problem})`, {
      value: path,
      next: 'restore the file from a backup; if the key is lost, create a new one with the command that made it (a node re-enrols with a new token)',
    });
    this.path = path;
  }
}

/** Writing a key file would replace a key that is already there. */
export class KeyFileExists extends OperatorError {
  readonly path: string;
  constructor(path: string) {
    super('a key file is already there; it is left untouched', {
      value: path,
      next: `if this key really is to be replaced, move it away first (mv ${path} ${path}.old); whatever trusted the old key must then be told the new one`,
    });
    this.path = path;
  }
}
