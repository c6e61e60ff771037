-- Provisions (schema/provision.ts): what a module revision offers (`provides`) and needs
-- (`consumes`), the credential issued to each consumer, and each credential file as sealed to a
-- node. Kept apart from module_revisions so the revision table and its digest stay as they were.
CREATE TABLE module_provisions (
  module text NOT NULL,
  version text NOT NULL,
  -- [{provision, path, owner, group, mode}], parsed with defaults applied.
  provides jsonb NOT NULL,
  consumes jsonb NOT NULL,
  PRIMARY KEY (module, version),
  CONSTRAINT module_provisions_revision_known FOREIGN KEY (module, version) REFERENCES module_revisions (name, version) ON DELETE CASCADE
);

-- One credential per consumer: a provision, a machine, a module. The value is kept only
-- encrypted (AES-256-GCM) under the store key that encrypts secrets (keys/secret-store.key),
-- bound to the provision, node, module and version, so a ciphertext moved to another row does
-- not open there. `rotate` makes a new value and raises the version.
CREATE TABLE provision_credentials (
  provision text NOT NULL
    CONSTRAINT provision_credentials_provision_is_label CHECK (provision ~ '^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$'),
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  module text NOT NULL,
  -- The provider it was resolved to at issue, for a person reading who accepts it.
  provider_node text NOT NULL,
  provider_module text NOT NULL,
  version integer NOT NULL
    CONSTRAINT provision_credentials_version_positive CHECK (version >= 1),
  ciphertext text NOT NULL,
  key_id text NOT NULL
    CONSTRAINT provision_credentials_key_id_format CHECK (key_id ~ '^[0-9a-f]{16}$'),
  issued_at timestamptz NOT NULL,
  PRIMARY KEY (provision, node, module)
);

CREATE INDEX provision_credentials_by_provider ON provision_credentials (provider_node, provision);

-- Each credential file as sealed to a node's key: kept so composing again gives the same box (a
-- sealed box is random each time, and a new one would be a change on every push). `sealed_for`
-- names what was sealed (versions, never a value); a box is sealed again only when it differs
-- or the node's key does.
CREATE TABLE provision_seals (
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  path text NOT NULL,
  sealed_for text NOT NULL,
  public_key text NOT NULL,
  box text NOT NULL,
  sealed_at timestamptz NOT NULL,
  PRIMARY KEY (node, path)
);
