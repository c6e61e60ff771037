-- Two more reasons a report is refused and counted: `wrong_subject`, a report naming another
-- node than the subject it came on (the broker lets a node publish only under its own subjects,
-- so the subject is who sent it); `malformed`, one that does not match the report contract.
ALTER TABLE report_refusals DROP CONSTRAINT report_refusals_reason_known;
ALTER TABLE report_refusals ADD CONSTRAINT report_refusals_reason_known
  CHECK (reason IN ('older', 'duplicate', 'unknown_node', 'wrong_subject', 'malformed'));
