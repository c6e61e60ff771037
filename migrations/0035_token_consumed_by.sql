-- Which node a token enrolled, so the machine that used it can ask again (its answer was lost)
-- and be told the same name, while anyone else is told the token was used.
ALTER TABLE tokens
  ADD COLUMN consumed_by text
    CONSTRAINT tokens_consumed_by_needs_consumed CHECK (consumed_by IS NULL OR consumed_at IS NOT NULL);
