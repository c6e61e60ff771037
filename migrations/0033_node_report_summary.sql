-- The latest kept report in brief, on the node's row, for `nodes` and status: which
-- declaration it answers and how its resources came out. The reports themselves are in
-- `reports`; this is what a listing reads without scanning them.
ALTER TABLE nodes
  ADD COLUMN report_generation bigint,
  ADD COLUMN report_declaration_digest text
    CONSTRAINT nodes_report_declaration_digest_format CHECK (report_declaration_digest ~ '^[0-9a-f]{64}$'),
  -- Outcome counts ({"applied": 3, "failed": 1, …}) and, when the host refused the whole
  -- declaration, why ({"refused": "stale_epoch"}).
  ADD COLUMN report_summary jsonb,
  ADD COLUMN reported_at timestamptz;
