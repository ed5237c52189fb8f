-- Scoped API keys with rate limits (issue 30 part 5, docs/security.md "Scoped API keys").
-- scopes: NULL for a key with its user's full rights, else a JSON array of the key's scopes
-- as auth/scope.c writes them (with the ids of the org/project a scope is narrowed to).
-- rate_count per rate_window_ms: NULL for no limit.
ALTER TABLE api_keys ADD COLUMN scopes TEXT;
ALTER TABLE api_keys ADD COLUMN rate_count INTEGER;
ALTER TABLE api_keys ADD COLUMN rate_window_ms INTEGER;
