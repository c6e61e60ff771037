-- Modules: named, versioned sets of resources (schema/module.ts, `mesh-control module add`).
-- Every registered revision is kept, so a node can hold an older one while a plan rolls the
-- newer one out, and so a plan can say what it moved a node from.
CREATE TABLE module_revisions (
  -- One DNS label, as schema/module.ts ModuleName.
  name text NOT NULL
    CONSTRAINT module_revisions_name_is_label CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  -- As written in module.json ("1.4.2"); compared number by number, never as text.
  version text NOT NULL
    CONSTRAINT module_revisions_version_format CHECK (version ~ '^(0|[1-9][0-9]{0,8})(\.(0|[1-9][0-9]{0,8})){0,3}$'),
  -- 1 for the first revision registered, one more for each after. A revision is registered
  -- only above the highest one, so this orders revisions as their versions do, and "newest"
  -- and "behind" are plain integer comparisons.
  seq integer NOT NULL
    CONSTRAINT module_revisions_seq_positive CHECK (seq >= 1),
  upgrade_policy text NOT NULL
    CONSTRAINT module_revisions_upgrade_policy_known CHECK (upgrade_policy IN ('one-first', 'together', 'record')),
  -- The resources, parsed with defaults applied, so one revision always composes the same bytes.
  resources jsonb NOT NULL
    CONSTRAINT module_revisions_resources_is_array CHECK (jsonb_typeof(resources) = 'array'),
  -- SHA-256 of the canonical manifest: the same version registered again must be the same content.
  digest text NOT NULL
    CONSTRAINT module_revisions_digest_format CHECK (digest ~ '^[0-9a-f]{64}$'),
  -- Where it was registered from (the path given to `module add`), for a person reading history.
  source text,
  added_at timestamptz NOT NULL,
  PRIMARY KEY (name, version),
  CONSTRAINT module_revisions_seq_unique UNIQUE (name, seq)
);

-- Which modules each node runs, and at which revision its declarations carry each. A plan moves
-- `version` node by node as it sends; a push moves every module of the node to its newest.
CREATE TABLE module_assignments (
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  module text NOT NULL,
  version text NOT NULL,
  assigned_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (node, module),
  CONSTRAINT module_assignments_revision_known FOREIGN KEY (module, version) REFERENCES module_revisions (name, version)
);

CREATE INDEX module_assignments_by_module ON module_assignments (module);

-- What each declaration sent with modules carried: which revision of each module, and a digest
-- of its resources. `push --behind` compares the latest send with what the node should hold now;
-- a plan taken up again by another controller sees here that a node was already sent the
-- revision, and does not send it twice.
CREATE TABLE module_sends (
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  -- The declaration's generation (declarations.generation).
  generation bigint NOT NULL
    CONSTRAINT module_sends_generation_positive CHECK (generation >= 1),
  -- {"web": "1.4.2", …}: every module the declaration carried, at its revision.
  modules jsonb NOT NULL
    CONSTRAINT module_sends_modules_is_object CHECK (jsonb_typeof(modules) = 'object'),
  -- SHA-256 of the canonical resource list the declaration carried.
  resources_digest text NOT NULL
    CONSTRAINT module_sends_resources_digest_format CHECK (resources_digest ~ '^[0-9a-f]{64}$'),
  sent_at timestamptz NOT NULL,
  PRIMARY KEY (node, generation)
);
