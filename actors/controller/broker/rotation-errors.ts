import { OperatorError } from '../../shared/operator-error';

/** `rotate-certificate --switch` with no next certificate made. */
export class NoNextCertificate extends OperatorError {
  constructor(nextCertFile: string) {
    super('there is no next broker certificate to switch to', {
      value: nextCertFile,
      next: 'make it and announce it to every node first: mesh-control broker rotate-certificate; switch once mesh-control status shows every node pins it',
    });
  }
}

/** The switch would cut off nodes that do not pin the next certificate yet. */
export class SwitchWouldCutOff extends OperatorError {
  /** The nodes that do not pin the next certificate, each with what it pins (or that nobody knows). */
  readonly behind: ReadonlyArray<{ node: string; pins: string[] | null }>;
  constructor(behind: ReadonlyArray<{ node: string; pins: string[] | null }>, next: string) {
    const names = behind.map((entry) => `${entry.node} (${entry.pins === null ? 'has not said what it pins' : `pins sha256 ${entry.pins.join(', sha256 ')}`})`);
    super(`${behind.length} node${behind.length === 1 ? '' : 's'} do not pin the next broker certificate sha256 ${next} yet: switching now cuts them off until each is enrolled again`, {
      value: names.join('; '),
      next: 'wait until they have linked and taken their declaration (mesh-control status lists who is behind), or switch anyway with --force and enrol those nodes again (mesh-control token issue --node NAME)',
    });
    this.behind = behind;
  }
}

/** The next key and certificate do not belong together: the files were changed by hand. */
export class NextCertificateDamaged extends OperatorError {
  constructor(keyFile: string, why: string) {
    super(`the next broker key does not match the next broker certificate (${why}); nothing was switched`, {
      value: keyFile,
      next: 'remove the next-broker.key and next-broker.crt files named here, then make a new next certificate: mesh-control broker rotate-certificate',
    });
  }
}

/** The files were switched, but the broker did not reload onto them. */
export class SwitchNotReloaded extends OperatorError {
  constructor(brokerConfigFile: string, cause: unknown) {
    super(`the broker's key and certificate were switched, but the broker did not reload onto them: ${cause instanceof Error ? cause.message : String(cause)}`, {
      value: brokerConfigFile,
      next: 'nodes still pin both certificates, so nothing is cut off: restart the broker (mesh-control broker, or its service), then run mesh-control broker rotate-certificate --switch again to send every node the new pin',
      cause,
    });
  }
}

/** `--force` without `--switch`: forcing only means something for the switch. */
export class ForceWithoutSwitch extends OperatorError {
  constructor() {
    super('--force only applies to --switch; nothing was done', {
      value: '--force',
      next: 'to announce the next certificate, drop --force; to switch while some nodes are behind, run mesh-control broker rotate-certificate --switch --force',
    });
  }
}
