import path from 'node:path';
import * as fs from '../../../shared/fs/promised-fs';
import * as z from 'zod';
import { isOperatorError, OperatorError } from '../../../shared/operator-error';
import { parseContract } from '../../../../schema/parse';
import { AbsolutePath } from '../../../../schema/primitives';

/** Where definitions live, under the machine's root: one `<name>.json` per service. */
export const SERVICE_DEFINITIONS_DIR = '/etc/mesh-host/services';
/** Where "enabled" is recorded, under the machine's root: an empty-ish file per service. */
export const SERVICE_ENABLED_DIR = '/etc/mesh-host/services/enabled';
/** Where a definition without `pidfile` keeps its pid, under the machine's root. */
export const SERVICE_PID_DIR = '/run/mesh-host/services';

const NoNul = z.string().refine((text) => !text.includes('\0'), { error: 'must not contain a NUL byte' });
const Account = z
  .string()
  .regex(/^(?:[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?|[0-9]{1,10})$/, { error: 'expected a user or group name, or a numeric id' });

/**
 * A service for a machine without a booted init (a container, a chroot, a minimal system): the
 * start-stop-daemon backend reads it from `<root>/etc/mesh-host/services/<name>.json`. Like a
 * unit file, it is written by whoever installs the service, never by the host.
 *
 * ```json
 * { "exec": ["/usr/bin/python3", "/srv/app/serve.py", "--port", "8080"],
 *   "pidfile": "/run/app.pid", "user": "app", "group": "app",
 *   "directory": "/srv/app", "env": { "LANG": "C.UTF-8" } }
 * ```
 *
 * `exec[0]` is the executable the process really is (for a script, its interpreter): the
 * backend matches the running process by it as well as by the pidfile, so a stale pidfile
 * naming a reused pid is never taken for the service, nor stopped.
 */
export const ServiceDefinition = z.strictObject({
  exec: z
    .array(NoNul)
    .min(1, { error: 'exec needs at least the program to run' })
    .refine((argv) => AbsolutePath.safeParse(argv[0]).success, { error: 'exec[0] must be an absolute path to the executable' }),
  /** Where the pid is kept, under the root; `/run/mesh-host/services/<name>.pid` when left out. */
  pidfile: AbsolutePath.optional(),
  user: Account.optional(),
  group: Account.optional(),
  /** The working directory of the process (the machine's, not under the root). */
  directory: AbsolutePath.optional(),
  /** The whole environment of the process besides PATH: the host's own is not passed on. */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name' }), NoNul).optional(),
});
/** See {@link ServiceDefinition}. */
export type ServiceDefinition = z.infer<typeof ServiceDefinition>;

/** A service definition file that exists but cannot be used. */
export class ServiceDefinitionInvalid extends OperatorError {
  constructor(file: string, reason: string, cause?: unknown) {
    super(`a service definition cannot be used: ${reason}`, {
      value: file,
      next: `Fix ${file} (fields: exec, pidfile, user, group, directory, env) and apply again.`,
      cause,
    });
  }
}

/** The definition file of `name` under `root`. */
export function serviceDefinitionPath(root: string, name: string): string {
  return path.join(root, SERVICE_DEFINITIONS_DIR, `${name}.json`);
}

/** The marker that records `name` as enabled, under `root`. */
export function serviceEnabledMarkerPath(root: string, name: string): string {
  return path.join(root, SERVICE_ENABLED_DIR, name);
}

/** The pidfile of `name` under `root`: the definition's, or the default. */
export function servicePidfilePath(root: string, name: string, definition: ServiceDefinition): string {
  return path.join(root, definition.pidfile ?? path.posix.join(SERVICE_PID_DIR, `${name}.pid`));
}

/** Reads the definition of `name`; undefined when there is none (the service does not exist). */
export async function readServiceDefinition(root: string, name: string): Promise<ServiceDefinition | undefined> {
  const file = serviceDefinitionPath(root, name);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ServiceDefinitionInvalid(file, `it is not JSON (${(error as Error).message})`, error);
  }
  try {
    return parseContract(ServiceDefinition, json, 'definition');
  } catch (error) {
    if (isOperatorError(error)) throw new ServiceDefinitionInvalid(file, error.what, error);
    throw error;
  }
}
