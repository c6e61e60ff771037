-- Plans: the staged rollout of one module revision to the nodes running an older one
-- (machines/plan.machine.ts). A plan is worked by the acting controller only, and every write
-- is a compare-and-set on `revision` that also carries the epoch it was written under: a
-- controller that lost the lease, or any writer holding a stale copy, changes nothing. A
-- controller taking over reads the open plans back and carries on from their state.
CREATE TABLE plans (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  module text NOT NULL,
  version text NOT NULL,
  upgrade_policy text NOT NULL
    CONSTRAINT plans_upgrade_policy_known CHECK (upgrade_policy IN ('one-first', 'together', 'record')),
  -- The machine's state, by one name (machines/plan.machine.ts PlanState).
  state text NOT NULL
    CONSTRAINT plans_state_known CHECK (state IN ('opening', 'held', 'sendingFirst', 'awaitingFirst', 'sending', 'stopped', 'done', 'closed', 'superseded')),
  -- The machine's context (PlanContext): targets, first machine, what was sent, skipped, failed.
  context jsonb NOT NULL
    CONSTRAINT plans_context_is_object CHECK (jsonb_typeof(context) = 'object'),
  -- Why it stopped or how it ended, for listings; the same as context.note.
  note text,
  superseded_by bigint REFERENCES plans (id),
  opened_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  ended_at timestamptz,
  CONSTRAINT plans_ended_when_final CHECK ((ended_at IS NOT NULL) = (state IN ('done', 'closed', 'superseded'))),
  -- Compare-and-set: every write names the revision it read and raises it by one.
  revision bigint NOT NULL DEFAULT 1
    CONSTRAINT plans_revision_positive CHECK (revision >= 1),
  -- The lease epoch of the last write; a write under a lower epoch is refused.
  epoch bigint NOT NULL
    CONSTRAINT plans_epoch_not_negative CHECK (epoch >= 0),
  CONSTRAINT plans_revision_known FOREIGN KEY (module, version) REFERENCES module_revisions (name, version)
);

-- The open plans, by module: what a controller taking over reads, and what a newer plan supersedes.
CREATE INDEX plans_open_by_module ON plans (module) WHERE ended_at IS NULL;
