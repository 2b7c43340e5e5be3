-- Keys are found by an HMAC digest; `hash` keeps the argon2id string of a key created before, until its
-- first use, and is '' after.
ALTER TABLE api_keys ADD COLUMN digest TEXT;
CREATE UNIQUE INDEX api_keys_digest ON api_keys (digest);
CREATE TABLE api_key_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
