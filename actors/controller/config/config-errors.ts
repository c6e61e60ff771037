import { OperatorError } from '../../shared/operator-error';

/** No mesh.json in the directory a verb was pointed at. */
export class MeshNotInitialised extends OperatorError {
  readonly dir: string;
  constructor(dir: string) {
    super('this directory holds no mesh (there is no mesh.json in it)', {
      value: dir,
      next: `give the directory \`mesh-control init\` made with --dir, or make one: mesh-control init --dir ${dir}`,
    });
    this.dir = dir;
  }
}

/** mesh.json exists but cannot be read as this version's configuration. */
export class MeshConfigInvalid extends OperatorError {
  readonly file: string;
  constructor(file: string, problem: string, cause?: unknown) {
    super(`the mesh configuration cannot be used: ${problem}`, {
      value: file,
      next: 'restore mesh.json from a backup, or fix the field named above; it is written by mesh-control init',
      cause,
    });
    this.file = file;
  }
}

/** `init` was pointed at a directory that already holds a mesh. */
export class MeshAlreadyInitialised extends OperatorError {
  readonly dir: string;
  constructor(dir: string) {
    super('this directory already holds a mesh; init makes a new one and never replaces keys nodes trust', {
      value: dir,
      next: `use it as it is (mesh-control serve --dir ${dir}), or give init another directory`,
    });
    this.dir = dir;
  }
}

/**
 * `init` found mesh files without a mesh.json: an earlier init that did not finish, or files
 * put there by hand. They are never overwritten, since one of them may be a key someone trusts.
 */
export class MeshDirectoryNotEmpty extends OperatorError {
  readonly dir: string;
  readonly found: readonly string[];
  constructor(dir: string, found: readonly string[]) {
    super(`this directory already has mesh files but no mesh.json (${found.join(', ')}): an earlier init did not finish`, {
      value: dir,
      next: `if nothing uses them, remove them (rm -r ${found.map((name) => `${dir}/${name}`).join(' ')}) and run init again, or give init another directory`,
    });
    this.dir = dir;
    this.found = found;
  }
}

/** An option given to `init` cannot be used. */
export class InitOptionInvalid extends OperatorError {
  readonly option: string;
  constructor(option: string, value: string, what: string, next: string) {
    super(`${option}: ${what}`, { value, next });
    this.option = option;
  }
}
