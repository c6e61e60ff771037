import { CONTROLLER_EXIT_STATUS_HELP } from '../../shared/cli/exit-status';
import { manPage } from '../../shared/cli/man-page';
import { verbSpecsOf } from '../../shared/cli/verb-specs';
import { runningVersion } from '../../shared/version';
import { DEFAULT_MESH_DIR } from '../config/mesh-dir-layout';
import { MESH_DIR_VARIABLE } from './controller-command';
import { controlCli } from './main';

/** mesh-control(1): the controller's manual page, made from its verbs' own definitions. */
export function controllerManual(): string {
  return manPage(
    {
      binary: 'mesh-control',
      summary: 'the Novox Mesh controller',
      version: runningVersion(),
      description: [
        'mesh-control makes a mesh (init), runs its broker (broker) and its controller (serve), and is how an operator enrols, declares, rolls out to, looks after and retires the machines of the mesh.',
        `Every verb works on a mesh directory: --dir, else $${MESH_DIR_VARIABLE}, else ${DEFAULT_MESH_DIR}. Every verb takes --json and then prints one JSON document, a failure included.`,
      ],
      exitStatus: CONTROLLER_EXIT_STATUS_HELP.replace(/^Exit status: /, ''),
      environment: [[MESH_DIR_VARIABLE, `The mesh directory when --dir is not given (else ${DEFAULT_MESH_DIR}).`]],
      seeAlso: [['nox-mesh-host', 1], ['nats-server', 8]],
    },
    verbSpecsOf(controlCli({ isTTY: false })),
  );
}
