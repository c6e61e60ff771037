import { OperatorError } from '../../shared/operator-error';

/** A verb named a module that was never registered. */
export class ModuleNotFound extends OperatorError {
  readonly module: string;
  constructor(module: string, known: readonly string[]) {
    super('no module of this name is registered', {
      value: module,
      next: `register it first: mesh-control module add PATH; registered now: ${known.length === 0 ? 'none' : known.join(', ')}`,
    });
    this.module = module;
  }
}

/** `module add` of a version that is not above the newest registered one. */
export class ModuleVersionNotNewer extends OperatorError {
  readonly module: string;
  readonly version: string;
  readonly newest: string;
  constructor(module: string, version: string, newest: string) {
    super(`module ${module} ${version} is not newer than the registered ${newest}; nothing was registered`, {
      value: version,
      next: `raise "version" in module.json above ${newest} and run mesh-control module add again`,
    });
    this.module = module;
    this.version = version;
    this.newest = newest;
  }
}

/** `module add` of a version already registered, with other content. */
export class ModuleVersionReused extends OperatorError {
  readonly module: string;
  readonly version: string;
  constructor(module: string, version: string) {
    super(`module ${module} ${version} is registered already with other content; a version names one content for ever`, {
      value: version,
      next: 'give the changed module.json a higher "version" and add it again',
    });
    this.module = module;
    this.version = version;
  }
}

/** Who declares a resource on a node: a module (at a version), `node declare`, or the overlay. */
export interface CollisionParty {
  /** `module web 1.2`, `node declare`, `the overlay`. */
  name: string;
  /** The module's name, for a module. */
  module?: string;
}

/**
 * Two parties would declare one thing on one node: the same file or directory path, package,
 * unit (service) or container. Refused before anything is recorded, naming both and the key,
 * because no later assignment could make the node's declaration whole again.
 */
export class ModuleCollision extends OperatorError {
  readonly node: string;
  /** The thing both declare: `path:/etc/nginx/nginx.conf`, `package:nginx`, `unit:nginx`, `container:db`. */
  readonly key: string;
  readonly parties: readonly [CollisionParty, CollisionParty];
  constructor(node: string, key: string, parties: readonly [CollisionParty, CollisionParty], refused: string) {
    super(`${parties[0].name} and ${parties[1].name} both declare ${key} on node ${node}; ${refused}`, {
      value: key,
      next: `take ${key} out of one of them (and add that module again with a higher version), or do not put both on node ${node}`,
    });
    this.node = node;
    this.key = key;
    this.parties = parties;
  }
}

/** One adoption line that keeps a node from being given work. */
export interface FailedAdoptionLine {
  subject: string;
  detail: string;
}

/**
 * A node whose adoption briefing (its last report) carries a `failed` line: it is a node, but it
 * is not given work until the failure is resolved, since a module placed where something the
 * mesh needed never happened is installed and does not work.
 */
export class NodeNotEligible extends OperatorError {
  readonly node: string;
  readonly lines: readonly FailedAdoptionLine[];
  constructor(node: string, lines: readonly FailedAdoptionLine[]) {
    const first = lines[0];
    const more = lines.length > 1 ? ` (and ${lines.length - 1} more failed line${lines.length > 2 ? 's' : ''})` : '';
    super(`node ${node} is not eligible for assignment until its failed adoption line is resolved: ${first?.subject ?? '?'}: ${first?.detail ?? ''}${more}`, {
      value: node,
      next: `read its briefing on the machine (nox-mesh-host briefing), fix what the failed line says; once the node reports a briefing without a failed line, assign again`,
    });
    this.node = node;
    this.lines = lines;
  }
}

/** `unassign` named a module the node does not run. */
export class ModuleNotAssigned extends OperatorError {
  readonly node: string;
  readonly module: string;
  constructor(node: string, module: string, runs: readonly string[]) {
    super(`node ${node} does not run module ${module}; nothing was changed`, {
      value: module,
      next: `node ${node} runs ${runs.length === 0 ? 'no modules' : runs.join(', ')}`,
    });
    this.node = node;
    this.module = module;
  }
}

/** `push` was given a node and `--behind` together, which ask for two different things. */
export class PushScopeConflict extends OperatorError {
  constructor(node: string) {
    super('push takes a node or --behind, not both; nothing was sent', {
      value: node,
      next: `run mesh-control push ${node} --why TEXT to send that node only, or mesh-control push --behind --why TEXT for every node behind`,
    });
  }
}
