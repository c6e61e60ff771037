-- Nodes: the controller's inventory, one row per node record. A record begins when a machine
-- first enrols (or is named by `mesh-control token issue --node`) and stays after release, so
-- its history can still be read. A machine that is only `hosted` is not a node and has no row.
CREATE TABLE nodes (
  -- One DNS label, as schema/primitives.ts NodeName: it names broker subjects and overlay hosts.
  name text PRIMARY KEY
    CONSTRAINT nodes_name_is_label CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  -- enrolled: holds an identity and is linked; disconnected: holds an identity, not heard from
  -- lately; revoked: its identity was revoked when a re-enrolment token was issued, and the
  -- machine has not enrolled again yet; released: retired by `mesh-control node release`.
  lifecycle_state text NOT NULL
    CONSTRAINT nodes_lifecycle_state_known CHECK (lifecycle_state IN ('enrolled', 'disconnected', 'revoked', 'released')),
  -- The node's Ed25519 identity key (base64) and the broker user derived from it (U…). One
  -- identity per record, and none once revoked or released: two live identities for one node
  -- is the stolen-laptop case.
  public_key text UNIQUE,
  nkey text UNIQUE,
  CONSTRAINT nodes_identity_whole CHECK ((public_key IS NULL) = (nkey IS NULL)),
  CONSTRAINT nodes_identity_matches_state CHECK ((public_key IS NOT NULL) = (lifecycle_state IN ('enrolled', 'disconnected'))),
  -- What the node said about itself at enrolment (schema/profile.ts, schema/inventory.ts).
  profile jsonb,
  inventory jsonb,
  -- The version of the host process that last reported: what runs, not what is installed.
  version_running text,
  -- Last contact, kept as a fact to show ("last seen 4 days ago"), never a reason to alarm.
  last_seen_at timestamptz,
  -- The latest copy of what the node says it owns (schema/owned.ts): a backup handed back only
  -- when the node rebuilds its store, never a source the controller decides from.
  owned jsonb,
  owned_at timestamptz,
  enrolled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
