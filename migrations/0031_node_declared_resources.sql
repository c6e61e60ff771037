-- What a person declared for a node (`mesh-control node declare NAME FILE`): the resources its
-- full declaration carries beside the overlay's. Stored parsed, defaults applied, so the same
-- declaration always composes the same bytes. Modules replace this in a later change.
ALTER TABLE nodes
  ADD COLUMN declared_resources jsonb NOT NULL DEFAULT '[]'::jsonb
    CONSTRAINT nodes_declared_resources_is_array CHECK (jsonb_typeof(declared_resources) = 'array'),
  ADD COLUMN declared_at timestamptz;
