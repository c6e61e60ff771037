import { promises as fs } from 'node:fs';
import { ControllerConfig } from '../../../schema/controller-config';
import { MeshConfigInvalid, MeshNotInitialised } from './config-errors';
import { meshDirLayout } from './mesh-dir-layout';

/**
 * Reads `<dir>/mesh.json`, the configuration `mesh-control init` wrote. MeshNotInitialised when
 * there is none (the usual mistake: a verb without `--dir` on a mesh made elsewhere);
 * MeshConfigInvalid naming the first bad field when it is not this version's format.
 */
export async function loadControllerConfig(dir: string): Promise<ControllerConfig> {
  const { meshFile, dir: root } = meshDirLayout(dir);
  let text: string;
  try {
    text = await fs.readFile(meshFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new MeshNotInitialised(root);
    throw new MeshConfigInvalid(meshFile, (error as Error).message, error);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new MeshConfigInvalid(meshFile, 'it is not JSON', error);
  }
  const parsed = ControllerConfig.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'the file' : issue.path.join('.');
    throw new MeshConfigInvalid(meshFile, `${where}: ${issue?.message ?? 'does not match'}`, parsed.error);
  }
  return parsed.data;
}
