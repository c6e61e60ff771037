-- Hand acts: what a person did by hand (push, plans close and retry, node revoke, a silence, or
-- anything done outside the mesh and recorded with `mesh-control hand-act record`), with the
-- person's own words for why, so repeated causes can be seen and the repair that keeps being
-- made by hand can be made the mesh's own. Kept a year (pruned as acts are recorded).
CREATE TABLE hand_acts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- When the controller recorded it, by its clock: once the act itself was done.
  at timestamptz NOT NULL,
  -- The verb through which it was done (`push`, `plans.close`, `hand-act.record`, …).
  verb text NOT NULL
    CONSTRAINT hand_acts_verb_format CHECK (verb ~ '^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$'),
  -- What it acted on: a node, `plan 4`, `behind`; null for the whole mesh or nothing named.
  subject text,
  -- The person's reason, one line; null only where the verb lets it be left out.
  why text
    CONSTRAINT hand_acts_why_one_line CHECK (why IS NULL OR (length(why) BETWEEN 1 AND 500 AND why !~ '[\r\n]')),
  -- The condition it answers (conditions show ID), when the person named one.
  condition text
    CONSTRAINT hand_acts_condition_format CHECK (condition IS NULL OR condition ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  -- The controller that recorded it (`<hostname>:<pid>`) and the lease epoch it acted under.
  controller text NOT NULL,
  epoch bigint
);

-- The newest first, a window (the week status counts), and the yearly prune all read by time.
CREATE INDEX hand_acts_at ON hand_acts (at);
