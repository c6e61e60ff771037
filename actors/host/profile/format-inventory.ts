import type { Inventory } from '../../../schema/inventory';
import type { InventoryGap } from './detect-inventory';
import { formatTable } from '../../shared/cli/format-table';

/**
 * The inventory as a person reads it: a table per section under a heading with its count. A
 * section that could not be listed says why in place of its table, so an empty list is never
 * mistaken for "the machine has none".
 */
export function formatInventory(inventory: Inventory, gaps: readonly InventoryGap[] = []): string {
  const section = (title: InventoryGap['section'], count: number, table: () => string): string => {
    const missing = gaps.filter((gap) => gap.section === title);
    const body = missing.length > 0
      ? missing.map((gap) => `  not listed: ${gap.reason}`).join('\n')
      : count === 0 ? '  none' : indent(table());
    return `${title} (${count})\n${body}`;
  };
  const parts = [
    section('packages', inventory.packages.length, () => formatTable(inventory.packages.map((pkg) => [pkg.name, pkg.version]), ['NAME', 'VERSION'])),
    section('services', inventory.services.length, () =>
      formatTable(inventory.services.map((service) => [service.name, service.state, service.enabled ? 'yes' : 'no']), ['NAME', 'STATE', 'ENABLED'])),
    section('containers', inventory.containers.length, () =>
      formatTable(inventory.containers.map((container) => [container.name, container.image, container.state]), ['NAME', 'IMAGE', 'STATE'])),
  ];
  const footer = [`collected at ${inventory.collected_at}`];
  if (inventory.truncated === true) footer.push('truncated: the machine has more than the inventory lists');
  return `${parts.join('\n\n')}\n\n${footer.join('\n')}`;
}

function indent(text: string): string {
  return text.split('\n').map((line) => `  ${line}`).join('\n');
}
