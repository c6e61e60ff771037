import * as z from 'zod';
import { base64DecodedBytes, bytesText, MAX_CONTENT_BYTES } from './bounds';
import { digestOf } from './canonical';
import { parseContract } from './parse';
import { AbsolutePath } from './primitives';
import { refuseDuplicates } from './refuse-duplicates';
import { modeOpensToOthers, SealedContent, SecretContent } from './secret';

// The six things a declaration can ask a machine to hold. The controller writes them into a
// declaration; the host applies, reads back and records them. What happens on removal is the
// host's (file/directory/container removed, service stopped, package and action forgotten).

/** The six resource shapes, the discriminator of {@link Resource}. */
export const ResourceShape = z.enum(['file', 'directory', 'package', 'container', 'service', 'action']);
/** See {@link ResourceShape}. */
export type ResourceShape = z.infer<typeof ResourceShape>;

/** How the host runs: held by an init (`resident`) or only while the platform allows (`episodic`). */
export const HostKind = z.enum(['resident', 'episodic']);
/** See {@link HostKind}. */
export type HostKind = z.infer<typeof HostKind>;

/**
 * The shapes each kind of host takes. An episodic host (a phone) has no package manager or
 * container runtime the mesh may drive, and no init to hold a service.
 */
export const SHAPES_FOR_HOST_KIND: Readonly<Record<HostKind, readonly ResourceShape[]>> = Object.freeze({
  resident: Object.freeze([...ResourceShape.options]),
  episodic: Object.freeze(['file', 'directory', 'action'] as const),
});

// A file or directory resource at "/" would have the host remove the root when undeclared.
const ResourcePath = AbsolutePath.refine((path) => path !== '/', { error: 'the root directory cannot be a resource' });
// A mode written as a JSON number (420, or 644 meaning octal) is the usual mistake: say so.
const FileMode = z
  .string({ error: (issue) => (issue.input === undefined ? undefined : 'expected an octal mode like "0644", as a string') })
  .regex(/^[0-7]{4}$/, { error: 'expected an octal mode like "0644"' });
const Account = z
  .string()
  .regex(/^(?:[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?|[0-9]{1,10})$/, { error: 'expected a user or group name, or a numeric id' });
const NoNul = z.string().refine((text) => !text.includes('\0'), { error: 'must not contain a NUL byte' });
const Environment = z.record(
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name like "HTTP_PROXY"' }),
  NoNul,
);

function withinContentBound(bytes: number): boolean {
  return bytes <= MAX_CONTENT_BYTES;
}

function contentTooLarge(bytes: number): string {
  return `the content is ${bytesText(bytes)}, over the ${bytesText(MAX_CONTENT_BYTES)} a file resource may hold; ship a file that large in a package`;
}

/** A file the host writes whole: its text or bytes (at most MAX_CONTENT_BYTES), mode and ownership. */
export const FileResource = z.strictObject({
  shape: z.literal('file'),
  path: ResourcePath,
  content: z.union(
    [
      z.strictObject({ text: z.string().refine((text) => withinContentBound(Buffer.byteLength(text, 'utf8')), { error: (issue) => contentTooLarge(Buffer.byteLength(issue.input as string, 'utf8')) }) }),
      z.strictObject({
        base64: z.base64({ error: 'expected base64' }).refine((text) => withinContentBound(base64DecodedBytes(text)), { error: (issue) => contentTooLarge(base64DecodedBytes(issue.input as string)) }),
      }),
      SecretContent,
      SealedContent,
    ],
    { error: 'expected content as {"text": "…"}, {"base64": "…"} or {"secret": "NAME"}' },
  ),
  mode: FileMode.default('0644'),
  owner: Account.default('root'),
  group: Account.default('root'),
});
/** See {@link FileResource}. */
export type FileResource = z.infer<typeof FileResource>;

/** A directory the host creates (not its contents): mode and ownership. */
export const DirectoryResource = z.strictObject({
  shape: z.literal('directory'),
  path: ResourcePath,
  mode: FileMode.default('0755'),
  owner: Account.default('root'),
  group: Account.default('root'),
});
/** See {@link DirectoryResource}. */
export type DirectoryResource = z.infer<typeof DirectoryResource>;

/**
 * A package installed through the system's package manager; `version` pins an exact one.
 * Names never start with `-`, so a name cannot be read as an option by the package manager.
 */
export const PackageResource = z.strictObject({
  shape: z.literal('package'),
  name: z.string().regex(/^[A-Za-z0-9@_+][A-Za-z0-9@._+-]{0,254}$/, {
    error: 'expected a package name: letters, digits and "@._+-", not starting with "-" or "."',
  }),
  version: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9.+~:_-]{0,127}$/, { error: 'expected an exact version like "1.24.0-r1"' })
    .optional(),
});
/** See {@link PackageResource}. */
export type PackageResource = z.infer<typeof PackageResource>;

const Port = z
  .int({ error: 'expected a port number 1-65535' })
  .min(1, { error: 'expected a port number 1-65535' })
  .max(65535, { error: 'expected a port number 1-65535' });

/** A container the host creates and keeps running through the machine's container runtime. */
export const ContainerResource = z.strictObject({
  shape: z.literal('container'),
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, {
    error: 'expected a container name: letters, digits and "_.-", starting with a letter or digit',
  }),
  image: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,511}$/, {
    error: 'expected an image reference like "docker.io/library/nginx:1.27"',
  }),
  command: z.array(NoNul).min(1, { error: 'leave command out to run the image default, or give at least one word' }).optional(),
  env: Environment.default({}),
  ports: z
    .array(
      z.strictObject({
        host: Port,
        container: Port,
        protocol: z.enum(['tcp', 'udp']).default('tcp'),
        address: z.union([z.ipv4(), z.ipv6()], { error: 'expected an IP address to bind, like "127.0.0.1"' }).optional(),
      }),
    )
    .default([]),
  volumes: z
    .array(
      z.strictObject({
        // abort: a bad volume name must not make the union report the name's complaint alone.
        source: z.union([AbsolutePath, z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, { abort: true })], {
          error: 'expected an absolute host path or a volume name',
        }),
        target: AbsolutePath,
        read_only: z.boolean().default(false),
      }),
    )
    .default([]),
  restart: z.enum(['no', 'always', 'unless-stopped', 'on-failure']).default('unless-stopped'),
});
/** See {@link ContainerResource}. */
export type ContainerResource = z.infer<typeof ContainerResource>;

/** A service the init runs (or not) and starts at boot (or not). Its unit file is not the host's. */
export const ServiceResource = z.strictObject({
  shape: z.literal('service'),
  name: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9:_.@\\-]{0,254}$/, {
    error: 'expected a service name like "nginx" or "getty@tty1.service"',
  }),
  state: z.enum(['running', 'stopped']),
  enabled: z.boolean(),
  /**
   * Files whose change restarts it: when a pass writes one of them (declared before the service,
   * as its credential file is), a service declared and found running is stopped and started
   * again, once. Left out, nothing restarts it.
   */
  restart_on: z.array(AbsolutePath).min(1, { error: 'leave restart_on out, or name at least one file' }).max(64, { error: 'at most 64 files' }).optional(),
});
/** See {@link ServiceResource}. */
export type ServiceResource = z.infer<typeof ServiceResource>;

/**
 * A command run when its guard says it has not yet had its effect. The guard is required:
 * without one, every reconcile (every ten minutes) would run the command again.
 */
export const ActionResource = z.strictObject({
  shape: z.literal('action'),
  // The key is a name rather than the argv so the command can change without a new identity.
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,127}$/, {
    error: 'expected an action name: lowercase letters, digits and "._-"',
  }),
  argv: z
    .array(NoNul)
    .min(1, { error: 'an action needs a command: argv must not be empty' })
    .refine((argv) => argv[0] !== '', { error: 'argv[0] must name a program' }),
  env: Environment.optional(),
  cwd: AbsolutePath.optional(),
  timeout_seconds: z
    .int({ error: 'expected a whole number of seconds' })
    .min(1, { error: 'expected 1 to 86400 seconds' })
    .max(86400, { error: 'expected 1 to 86400 seconds' })
    .default(300),
  guard: z.union(
    [
      z.strictObject({ creates: AbsolutePath }),
      z.strictObject({ unless: z.array(NoNul).min(1, { error: 'an unless guard needs a command' }) }),
    ],
    { error: 'expected a guard {"creates": "/path"} or {"unless": ["command", …]}, so applying again does nothing' },
  ),
});
/** See {@link ActionResource}. */
export type ActionResource = z.infer<typeof ActionResource>;

/** Any one resource, told apart by `shape`. Parsing applies the defaults each shape declares. */
export const Resource = z.discriminatedUnion(
  'shape',
  [FileResource, DirectoryResource, PackageResource, ContainerResource, ServiceResource, ActionResource],
  { error: `expected shape to be one of ${ResourceShape.options.map((shape) => `"${shape}"`).join(', ')}` },
);
/** See {@link Resource}. */
export type Resource = z.infer<typeof Resource>;

/** A resource's identity, `shape:key`: `file:/etc/motd`, `package:nginx`, `action:make-ca`. */
export const ResourceKey = z
  .string()
  .regex(/^(?:file|directory|package|container|service|action):\S/, { error: 'expected a resource key like "file:/etc/motd"' });
/** See {@link ResourceKey}. */
export type ResourceKey = z.infer<typeof ResourceKey>;

/**
 * The identity of a resource: its path for files and directories, its name for the rest.
 * Two resources with one key are the same thing on the machine, whatever else differs.
 */
export function resourceKey(resource: Resource): ResourceKey {
  switch (resource.shape) {
    case 'file':
    case 'directory':
      return `${resource.shape}:${resource.path}`;
    default:
      return `${resource.shape}:${resource.name}`;
  }
}

/** The shape a resource key names (the part before the first `:`). */
export function shapeOfKey(key: ResourceKey): ResourceShape {
  return ResourceShape.parse(key.slice(0, key.indexOf(':')));
}

/**
 * The content digest of a resource: SHA-256 of its canonical JSON once defaults are applied,
 * so `{mode: "0644"}` written out or left to the default digests the same, and key order
 * never matters. The host compares it with what it recorded to tell `unchanged` from a change.
 */
export function resourceDigest(resource: z.input<typeof Resource>): string {
  return digestOf(parseContract(Resource, resource, 'resource'));
}

/**
 * {@link resourceDigest} of a resource that is already what the schema gives (from the store or
 * a verified declaration: defaults applied, nothing unknown), without parsing it again. A pass
 * digests every resource it holds, and the parse was half of that work and most of its garbage.
 */
export function parsedResourceDigest(resource: Resource): string {
  return digestOf(resource);
}

/**
 * A declaration's resources: no two with the same key, and no file and directory at one path
 * (their keys differ, but the machine has one thing there).
 */
export const ResourceList = z
  .array(Resource)
  .superRefine(refuseDuplicates('resource key', resourceKey))
  .superRefine((resources, ctx) => {
    // A secret readable by every account is no secret (the default 0644 is): refused rather
    // than warned, since a warning scrolls past and the value would sit open on every node.
    resources.forEach((resource, index) => {
      if (resource.shape !== 'file' || !('secret' in resource.content || 'sealed' in resource.content) || !modeOpensToOthers(resource.mode)) return;
      const message = `a file holding a secret must not be open to every account (mode ${resource.mode}); declare "mode": "0600" or "0640" and the module's account as "owner"`;
      ctx.addIssue({ code: 'custom', path: [index, 'mode'], message, input: resource.mode });
    });
  })
  .superRefine((resources, ctx) => {
    const firstAt = new Map<string, { shape: ResourceShape; index: number }>();
    resources.forEach((resource, index) => {
      if (resource.shape !== 'file' && resource.shape !== 'directory') return;
      const first = firstAt.get(resource.path);
      if (first === undefined) firstAt.set(resource.path, { shape: resource.shape, index });
      else if (first.shape !== resource.shape) {
        const message = `a ${first.shape} is already declared at ${JSON.stringify(resource.path)}: [${first.index}]`;
        ctx.addIssue({ code: 'custom', path: [index, 'path'], message, input: resource.path });
      }
    });
  });
/** See {@link ResourceList}. */
export type ResourceList = z.infer<typeof ResourceList>;

/**
 * A superRefine for records that carry a resource key beside its shape (owned entries, report
 * results): the two must agree, or a reader going by one would misfile the other.
 */
export function keyMatchesShape(item: { key: string; shape: ResourceShape }, ctx: z.core.$RefinementCtx): void {
  if (item.key.startsWith(`${item.shape}:`)) return;
  ctx.addIssue({ code: 'custom', path: ['key'], message: `expected a key starting "${item.shape}:" to match the shape`, input: item.key });
}
