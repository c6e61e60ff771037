import * as fs from '../../shared/fs/promised-fs';
import { bytesText, MAX_DECLARATION_BYTES } from '../../../schema/bounds';
import { FoundationBundle } from '../../../schema/foundation-bundle';
import { parseContract } from '../../../schema/parse';
import { FoundationBundleUnreadable } from './foundation-errors';

/** Reads and checks a bundle file (`reconcile --bundle FILE`); refused whole when it is not one. */
export async function readFoundationBundle(file: string): Promise<FoundationBundle> {
  const next = `fix ${file}, or print the bundle this host carries with nox-mesh-host bundle > first-node.json; nothing was applied`;
  let text: string;
  try {
    // Refused before it is read, so a file of any size costs the host nothing.
    const { size } = await fs.stat(file);
    if (size > MAX_DECLARATION_BYTES) {
      throw new FoundationBundleUnreadable(`the bundle file is ${bytesText(size)}, over the ${bytesText(MAX_DECLARATION_BYTES)} a declaration may be`, { value: file, next });
    }
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof FoundationBundleUnreadable) throw error;
    throw new FoundationBundleUnreadable(`cannot read the bundle file: ${(error as Error).message}`, { value: file, next, cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new FoundationBundleUnreadable(`the bundle file is not JSON: ${(error as Error).message}`, { value: file, next, cause: error });
  }
  return parseContract(FoundationBundle, json, 'bundle', { next });
}
