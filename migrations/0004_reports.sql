-- Reports: what each node said it did (schema/report.ts), kept in the order the node made them.
-- Accounts are kept by epoch, then sequence (declarations applied), then report sequence
-- (reports sent); the primary key makes that triple unique per node, and a report not newer
-- than the node's latest is refused and counted in report_refusals instead of stored. The
-- node's owned resources from its latest report live on its nodes row, not here.
CREATE TABLE reports (
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  epoch bigint NOT NULL
    CONSTRAINT reports_epoch_not_negative CHECK (epoch >= 0),
  sequence bigint NOT NULL
    CONSTRAINT reports_sequence_not_negative CHECK (sequence >= 0),
  report_sequence bigint NOT NULL
    CONSTRAINT reports_report_sequence_not_negative CHECK (report_sequence >= 0),
  -- The declaration this report is about; null before the node has applied any.
  declaration_digest text
    CONSTRAINT reports_declaration_digest_format CHECK (declaration_digest ~ '^[0-9a-f]{64}$'),
  generation bigint NOT NULL
    CONSTRAINT reports_generation_not_negative CHECK (generation >= 0),
  -- Per-resource results; the host's refusal of a whole declaration; an adoption briefing.
  results jsonb NOT NULL,
  refused jsonb,
  briefing jsonb,
  version_running text NOT NULL,
  seconds_since_linked double precision,
  -- The node's clock, then the controller's.
  sent_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL,
  -- Also serves "the node's latest report" as a backward scan.
  PRIMARY KEY (node, epoch, sequence, report_sequence)
);

-- Reports refused, counted by node and reason, for status. No reference to nodes: a report
-- from a node the store does not know is counted too.
CREATE TABLE report_refusals (
  node text NOT NULL,
  -- older: behind the node's latest report; duplicate: the same epoch, sequence and report
  -- sequence as one already kept (a replay); unknown_node: no such node record.
  reason text NOT NULL
    CONSTRAINT report_refusals_reason_known CHECK (reason IN ('older', 'duplicate', 'unknown_node')),
  count bigint NOT NULL
    CONSTRAINT report_refusals_count_positive CHECK (count > 0),
  first_at timestamptz NOT NULL,
  last_at timestamptz NOT NULL,
  PRIMARY KEY (node, reason)
);
