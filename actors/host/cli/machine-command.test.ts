import { runVerb } from '../profile/testing/cli-harness';
import { InventoryCommand } from './inventory.command';
import { OwnedCommand } from './owned.command';
import { ProfileCommand } from './profile.command';

// `--root` is declared once, in MachineCommand: every verb that takes it says the same thing
// about it and refuses the same bad directory the same way.

async function rootHelpOf(command: typeof InventoryCommand | typeof ProfileCommand | typeof OwnedCommand, verb: string): Promise<string> {
  const { code, stdout } = await runVerb([command], [verb, '--help']);
  expect(code).toBe(0);
  // clipanion wraps a description over several lines; read from --root to the next option or
  // section, without the terminal's colour codes.
  // eslint-disable-next-line no-control-regex
  const plain = stdout.replace(/\u001b\[[0-9;]*m/g, '');
  const from = plain.indexOf('--root');
  if (from < 0) throw new Error(`${verb} --help does not show --root:\n${stdout}`);
  const rest = plain.slice(from);
  const end = rest.slice(1).search(/\n\s*(--|━|\n)/);
  return (end < 0 ? rest : rest.slice(0, end + 1)).replace(/\s+/g, ' ').trim();
}

describe('--root on every verb that looks at a machine', () => {
  test('is described alike by inventory, profile and a verb on the store', async () => {
    const inventory = await rootHelpOf(InventoryCommand, 'inventory');
    expect(inventory).toMatch(/Treat this directory as the machine/);
    expect(await rootHelpOf(ProfileCommand, 'profile')).toBe(inventory);
    expect(await rootHelpOf(OwnedCommand, 'owned')).toBe(inventory);
  });

  test('refuses a directory that is not there alike on inventory, profile and a verb on the store', async () => {
    const said = await Promise.all([
      runVerb([InventoryCommand], ['inventory', '--root', '/nonexistent/mesh-root']),
      runVerb([ProfileCommand], ['profile', '--root', '/nonexistent/mesh-root']),
      runVerb([OwnedCommand], ['owned', '--root', '/nonexistent/mesh-root']),
    ]);
    for (const { code, stderr } of said) {
      expect(code).toBe(1);
      expect(stderr).toMatch(/^error: the root directory does not exist: "\/nonexistent\/mesh-root"\n/);
    }
  });
});
