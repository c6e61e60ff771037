import * as z from 'zod';
import { HostKind } from './resource';

/**
 * Where WireGuard comes from on a machine: `kernel` (the module is loaded, built in or
 * installed), `wireguard-go` (no module, the userspace program is installed), `none`.
 */
export const WireGuardSupport = z.enum(['kernel', 'wireguard-go', 'none']);
/** See {@link WireGuardSupport}. */
export type WireGuardSupport = z.infer<typeof WireGuardSupport>;

/**
 * An absolute path of plain characters (letters, digits, `._+-` and `/`), no `..` part, at most
 * 1024 characters: written into a line wg-quick hands to a shell as root.
 */
export const WireGuardKeyPath = z
  .string()
  .max(1024, { error: 'at most 1024 characters' })
  // PostUp quotes it (see renderWireguardConfig); what a quote, wg-quick's comments (#), its %i
  // or a line break would change cannot be in it.
  .regex(/^(?:\/[^/'#%\p{Cc}]+)+$/u, { error: 'expected an absolute path like "/var/lib/mesh-host/wireguard.key", without a quote (\'), "#", "%" or a control character' })
  .refine((text) => !text.split('/').includes('..'), { error: 'must not contain a ".." part' });
/** See {@link WireGuardKeyPath}. */
export type WireGuardKeyPath = z.infer<typeof WireGuardKeyPath>;

/**
 * What a machine can do, reported by the host at enrolment and on request (`nox-mesh-host
 * profile`). It is the controller's input, not a diagnostic: what a node is given depends on
 * its init, package manager, container runtime, architecture and whether it has a desktop.
 */
export const Profile = z.strictObject({
  // From os-release: ID is a lowercase word ("alpine", "arch", "debian").
  os: z.strictObject({
    id: z.string().regex(/^[a-z0-9._-]{1,64}$/, { error: 'expected an os-release ID like "alpine"' }),
    version_id: z.string().min(1).max(64).optional(),
    pretty_name: z.string().min(1).max(256).optional(),
  }),
  arch: z.string().regex(/^[a-z0-9_]{1,32}$/, { error: 'expected a machine architecture like "x86_64" or "aarch64"' }),
  kernel: z.string().min(1).max(256),
  init: z.enum(['systemd', 'openrc', 'none', 'unknown']),
  package_manager: z.enum(['apk', 'pacman', 'apt', 'none']),
  container_runtime: z.enum(['docker', 'podman', 'none']),
  graphical_session: z.boolean(),
  // How the overlay's WireGuard interface can be made here: by the kernel, by the userspace
  // wireguard-go, or not at all. Optional: hosts older than this field did not say.
  wireguard: WireGuardSupport.optional(),
  // Where the host keeps the node's WireGuard private key, as this machine's processes see the
  // path (its state directory's wireguard.key, under --state-dir or --root): the configuration's
  // PostUp sets the key from it. Said by `enrol`, not by `profile`; absent from older hosts,
  // which keep it in the default state directory. wg-quick runs PostUp through a shell, so only
  // a plain absolute path is taken.
  wireguard_key_path: WireGuardKeyPath.optional(),
  host_kind: HostKind,
  hostname: z
    .string()
    .regex(/^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})$/, { error: 'expected a host name like "workstation"' }),
});
/** See {@link Profile}. */
export type Profile = z.infer<typeof Profile>;
