import { EXIT_STATUS_HELP } from '../../shared/cli/exit-status';
import { manPage } from '../../shared/cli/man-page';
import { verbSpecsOf } from '../../shared/cli/verb-specs';
import { runningVersion } from '../../shared/version';
import { hostCli } from './main';

/** nox-mesh-host(1): the node host's manual page, made from its verbs' own definitions. */
export function hostManual(): string {
  return manPage(
    {
      binary: 'nox-mesh-host',
      summary: 'the Novox Mesh node host',
      version: runningVersion(),
      description: [
        'nox-mesh-host applies declarations (files, directories, packages, containers, services, actions) to the machine it runs on: by hand (apply, reconcile), or, once enrolled in a mesh (enrol), as a daemon (run) that receives signed declarations from the controller.',
        'It never removes what it did not make: what it found already on the machine is adopted and handed back as it was when released. Every verb takes --json and then prints one JSON document, a failure included.',
      ],
      exitStatus: EXIT_STATUS_HELP.replace(/^Exit status: /, ''),
      environment: [],
      seeAlso: [['mesh-control', 1]],
    },
    verbSpecsOf(hostCli(undefined, { isTTY: false })),
  );
}
