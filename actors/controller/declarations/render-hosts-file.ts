import type { OverlayName } from '../../../schema/overlay';

/** The overlay's names in hosts(5) form: one `address<TAB>name` line each, in the order given. */
export function renderHostsFile(names: readonly OverlayName[]): string {
  return ['# Names on the mesh overlay, written by the mesh controller.', ...names.map((entry) => `${entry.address}\t${entry.name}`)].join('\n') + '\n';
}
