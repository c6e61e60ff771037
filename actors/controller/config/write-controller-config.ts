import { ControllerConfig } from '../../../schema/controller-config';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { meshDirLayout } from './mesh-dir-layout';

/**
 * Writes `<dir>/mesh.json` atomically: 0644, since it names key files but holds no key, unless
 * the store's URL carries a password, which makes it 0600. The value is checked against the
 * schema first, so a file this program could not read back is never written. Returns the file
 * and its mode.
 */
export async function writeControllerConfig(dir: string, config: ControllerConfig): Promise<{ file: string; mode: number }> {
  const checked = ControllerConfig.parse(config);
  const { meshFile } = meshDirLayout(dir);
  const mode = checked.store.kind === 'postgres' && hasPassword(checked.store.url) ? 0o600 : 0o644;
  await writeFileAtomic(meshFile, `${JSON.stringify(checked, null, 2)}\n`, mode);
  return { file: meshFile, mode };
}

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return true;
  }
}
