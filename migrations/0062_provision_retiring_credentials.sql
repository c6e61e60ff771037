-- Credentials a rotation replaced that the provider still accepts beside the new one, so a
-- consumer keeps working until it has the new one: each is dropped once a report of the
-- consumer answers a declaration sent after the rotation (generation above
-- `superseded_at_generation`) with its credential file applied or unchanged, and its provider is
-- then sent the list without it. Kept encrypted as provision_credentials are, bound to the same
-- provision, node, module and version; dropped with the consumer's credential.
CREATE TABLE provision_retiring_credentials (
  provision text NOT NULL,
  node text NOT NULL,
  module text NOT NULL,
  version integer NOT NULL
    CONSTRAINT provision_retiring_credentials_version_positive CHECK (version >= 1),
  ciphertext text NOT NULL,
  key_id text NOT NULL
    CONSTRAINT provision_retiring_credentials_key_id_format CHECK (key_id ~ '^[0-9a-f]{16}$'),
  -- The consumer node's last generation when the credential was replaced: a declaration of a
  -- later generation was composed with the new one.
  superseded_at_generation integer NOT NULL,
  superseded_at timestamptz NOT NULL,
  PRIMARY KEY (provision, node, module, version),
  CONSTRAINT provision_retiring_credentials_consumer FOREIGN KEY (provision, node, module)
    REFERENCES provision_credentials (provision, node, module) ON DELETE CASCADE
);

-- Every kept report looks up its node's replaced credentials.
CREATE INDEX provision_retiring_credentials_by_node ON provision_retiring_credentials (node);
