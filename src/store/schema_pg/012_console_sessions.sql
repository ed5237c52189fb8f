-- Console sessions (issue 10): the web console's login, kept in the store so that any
-- node can check a session cookie.  The token itself is never stored, only its SHA-256;
-- the CSRF token is stored as is (the console reads it back from whoami, and alone it
-- authenticates nothing).  A session ends when its user is deleted (cascade), at logout,
-- or once it has been idle longer than --session-idle (expired rows are purged when
-- sessions are created).  Times are Unix milliseconds.

CREATE TABLE console_sessions (
    token_hash   BYTEA PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
