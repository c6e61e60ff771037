-- Secrets a module's files name ({"content": {"secret": "NAME"}}), set with `mesh-control secret
-- set MODULE NAME`. The value is kept only encrypted (AES-256-GCM) under the store key, a file in
-- the mesh directory (keys/secret-store.key), never in the database: a copy of the database alone
-- reveals no value. The module, name and version are bound into each encryption, so a row's
-- ciphertext copied onto another row does not open there.
CREATE TABLE secrets (
  -- The module whose files may name it (schema/module.ts ModuleName); a secret may be set before
  -- the module is registered, so this is not a reference.
  module text NOT NULL
    CONSTRAINT secrets_module_is_label CHECK (module ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  name text NOT NULL
    CONSTRAINT secrets_name_format CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  -- 1 when first set, one more on each set after: what a declaration names beside the sealed box.
  version integer NOT NULL
    CONSTRAINT secrets_version_positive CHECK (version >= 1),
  -- base64 of nonce (12 bytes) || ciphertext || tag (16 bytes).
  ciphertext text NOT NULL,
  -- The first 16 hex digits of SHA-256 of the store key: a key that is not the one these were
  -- encrypted with is said as such, not as a damaged value.
  key_id text NOT NULL
    CONSTRAINT secrets_key_id_format CHECK (key_id ~ '^[0-9a-f]{16}$'),
  -- Its size in bytes, for `secret list` (the length is no secret: the sealed box shows it).
  bytes integer NOT NULL,
  set_at timestamptz NOT NULL,
  PRIMARY KEY (module, name)
);

-- Each secret as sealed to one node's key, kept so that composing again gives the same box (a
-- sealed box is random each time, and a new one would read as a change on every push), and so
-- that, when a node's key dies, what was sealed to it can be named item by item. A box opens
-- only with the node's own key: the controller cannot read these.
CREATE TABLE secret_seals (
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  module text NOT NULL,
  name text NOT NULL,
  version integer NOT NULL,
  -- The node's Ed25519 key (base64) the box is sealed to.
  public_key text NOT NULL,
  box text NOT NULL,
  -- The file the box was sealed for, for a person reading what a dead key can no longer take.
  path text NOT NULL,
  sealed_at timestamptz NOT NULL,
  PRIMARY KEY (node, module, name, path)
);

CREATE INDEX secret_seals_by_key ON secret_seals (public_key);
