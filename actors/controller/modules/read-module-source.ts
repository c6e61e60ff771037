import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ModuleManifest } from '../../../schema/module';
import { parseContract } from '../../../schema/parse';
import { OperatorError } from '../../shared/operator-error';
import { refuseSecretFileMistakes } from '../secrets/secret-file-rules';

/** The file name a module folder holds its manifest under. */
export const MODULE_FILE = 'module.json';

/** A module given to `module add` could not be read: no such file, not JSON, a referenced file missing. */
export class ModuleSourceUnreadable extends OperatorError {}

/** A module read from disk: the manifest (file contents inlined) and the module.json it came from. */
export interface ModuleSource {
  manifest: ModuleManifest;
  /** The module.json read, absolute. */
  file: string;
}

/**
 * Reads a module for `mesh-control module add PATH`: PATH is a module.json (any name), or a
 * folder holding `module.json`. A file resource may give its content as `{"file": "relative/path"}`
 * instead of `{"text": …}` or `{"base64": …}`: the file is read from beside module.json (never
 * from outside its folder) and carried inline, as text when it is UTF-8 and base64 otherwise.
 * The result is checked against the module contract, a mistake named by its place in the file.
 */
export async function readModuleSource(given: string): Promise<ModuleSource> {
  const absolute = path.resolve(given);
  const stats = await fs.stat(absolute).catch((error: unknown) => {
    throw new ModuleSourceUnreadable('the module could not be read', { value: given, next: 'give a module.json, or a folder holding one', cause: error });
  });
  const file = stats.isDirectory() ? path.join(absolute, MODULE_FILE) : absolute;
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new ModuleSourceUnreadable(`the module file could not be read${stats.isDirectory() ? ` (a module folder holds ${MODULE_FILE})` : ''}`, { value: file, next: 'check the path and that the file is readable', cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ModuleSourceUnreadable(`the module file is not JSON (${(error as Error).message})`, { value: file, next: 'write it as {"name": …, "version": …, "resources": [...]}', cause: error });
  }
  if (isRecord(json)) refuseSecretFileMistakes(typeof json.name === 'string' ? json.name : path.basename(path.dirname(file)), json.resources);
  const inlined = await inlineFiles(json, path.dirname(file));
  return { manifest: parseContract(ModuleManifest, inlined, 'module', { next: `fix that field in ${file} and run this again` }), file };
}

async function inlineFiles(json: unknown, folder: string): Promise<unknown> {
  if (!isRecord(json) || !Array.isArray(json.resources)) return json;
  const resources = await Promise.all(
    json.resources.map(async (resource: unknown) => {
      if (!isRecord(resource) || resource.shape !== 'file' || !isRecord(resource.content) || typeof resource.content.file !== 'string') return resource;
      return { ...resource, content: await contentOf(resource.content.file, folder) };
    }),
  );
  return { ...json, resources };
}

async function contentOf(reference: string, folder: string): Promise<{ text: string } | { base64: string }> {
  const target = path.resolve(folder, reference);
  const relative = path.relative(folder, target);
  if (path.isAbsolute(reference) || relative.startsWith('..') || relative === '') {
    throw new ModuleSourceUnreadable('a file resource names content outside the module folder', { value: reference, next: `put the file in ${folder} and name it relative to module.json` });
  }
  let bytes: Buffer;
  try {
    const real = await fs.realpath(target);
    if (path.relative(await fs.realpath(folder), real).startsWith('..')) {
      throw new ModuleSourceUnreadable('a file resource names content that leads outside the module folder', { value: reference, next: `put the file itself in ${folder}, not a link to elsewhere` });
    }
    bytes = await fs.readFile(real);
  } catch (error) {
    if (error instanceof ModuleSourceUnreadable) throw error;
    throw new ModuleSourceUnreadable('a file the module names could not be read', { value: reference, next: `check that ${target} exists and is readable`, cause: error });
  }
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? { text } : { base64: bytes.toString('base64') };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
