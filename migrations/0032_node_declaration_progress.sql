-- Where a node is in the order of its declarations: overlay first, then full, and final on
-- release. Kept on the node's row so a controller that restarts (or another that takes the
-- lease) carries on where the last one stopped.
ALTER TABLE nodes
  -- The last generation allotted to the node. Never reset, not even on re-enrolment: a machine
  -- re-enrolled with its store intact refuses any generation not above the one it applied.
  ADD COLUMN declaration_generation bigint NOT NULL DEFAULT 0
    CONSTRAINT nodes_declaration_generation_not_negative CHECK (declaration_generation >= 0),
  -- The overlay generation the node reported applied since it (re-)enrolled; null until then.
  -- The full declaration is sent only once this is set.
  ADD COLUMN overlay_applied_generation bigint,
  -- Why the full declaration is held back (the overlay failed), for status; null when it is not.
  ADD COLUMN full_held text,
  -- The generation of the final declaration sent by `mesh-control node release`; null unless a
  -- release is under way. The node is released when its report for this generation is clean.
  ADD COLUMN release_generation bigint,
  -- Why the release has not finished (the final declaration failed somewhere), for status.
  ADD COLUMN release_held text,
  -- The node's last copy of what it owned, taken when it re-enrolled into this record: handed
  -- back with its next full declaration (the node may have lost its store), then cleared.
  ADD COLUMN previously_owned jsonb;

