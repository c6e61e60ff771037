-- How many requests with a token were refused as malformed, badly signed or with a reply subject
-- the broker did not map: someone holding the token's broker password but not acting like the
-- host. At a small number the token is spent (its expiry brought to that moment and its broker
-- user removed), so a token holder cannot keep the controller busy or probe it at will.
ALTER TABLE tokens
  ADD COLUMN malformed_requests integer NOT NULL DEFAULT 0
    CONSTRAINT tokens_malformed_requests_not_negative CHECK (malformed_requests >= 0);
