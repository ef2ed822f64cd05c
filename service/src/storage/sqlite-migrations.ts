// Versioned metadata schema. Never edit an applied migration: add the next version.
export const SQLITE_MIGRATIONS: Array<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'users, tenancy, keys, tokens, settings',
    sql: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,
        is_admin INTEGER NOT NULL DEFAULT 0,
        enabled INTEGER NOT NULL DEFAULT 1,
        selected_type TEXT CHECK (selected_type IN ('fractal', 'prism')),
        selected_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE sessions (
        id_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX sessions_user ON sessions(user_id);
      CREATE TABLE fractals (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        description TEXT NOT NULL DEFAULT '',
        is_default INTEGER NOT NULL DEFAULT 0,
        retention_days INTEGER,
        archive_retention_days INTEGER,
        quota_bytes INTEGER,
        quota_action TEXT NOT NULL DEFAULT 'reject' CHECK (quota_action IN ('reject', 'rollover')),
        stats_log_count INTEGER NOT NULL DEFAULT 0,
        stats_size_bytes INTEGER NOT NULL DEFAULT 0,
        stats_oldest TEXT,
        stats_newest TEXT,
        stats_updated_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE prisms (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        description TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE prism_members (
        prism_id TEXT NOT NULL REFERENCES prisms(id) ON DELETE CASCADE,
        fractal_id TEXT NOT NULL REFERENCES fractals(id) ON DELETE CASCADE,
        added_at TEXT NOT NULL,
        PRIMARY KEY (prism_id, fractal_id)
      );
      CREATE TABLE groups (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        description TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE group_members (
        group_id TEXT NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        added_at TEXT NOT NULL,
        PRIMARY KEY (group_id, user_id)
      );
      -- A role on one fractal or prism, granted to exactly one user or one group.
      CREATE TABLE permissions (
        id TEXT PRIMARY KEY,
        scope_type TEXT NOT NULL CHECK (scope_type IN ('fractal', 'prism')),
        scope_id TEXT NOT NULL,
        user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
        group_id TEXT REFERENCES groups(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('viewer', 'analyst', 'admin')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK ((user_id IS NULL) <> (group_id IS NULL))
      );
      CREATE UNIQUE INDEX permissions_user ON permissions(scope_type, scope_id, user_id) WHERE user_id IS NOT NULL;
      CREATE UNIQUE INDEX permissions_group ON permissions(scope_type, scope_id, group_id) WHERE group_id IS NOT NULL;
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        scope_type TEXT NOT NULL CHECK (scope_type IN ('fractal', 'prism')),
        scope_id TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        key_hash TEXT NOT NULL UNIQUE,
        key_prefix TEXT NOT NULL,
        permissions TEXT NOT NULL,
        expires_at TEXT,
        enabled INTEGER NOT NULL DEFAULT 1,
        created_by TEXT REFERENCES users(id) ON DELETE SET NULL,
        last_used_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (scope_type, scope_id, name)
      );
      CREATE TABLE ingest_tokens (
        id TEXT PRIMARY KEY,
        fractal_id TEXT NOT NULL REFERENCES fractals(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        token_encrypted TEXT NOT NULL,
        parser_type TEXT NOT NULL DEFAULT 'json' CHECK (parser_type IN ('json', 'kv', 'syslog')),
        normalization INTEGER NOT NULL DEFAULT 1,
        normalizers TEXT NOT NULL DEFAULT '[]',
        timestamp_fields TEXT NOT NULL DEFAULT '[]',
        enabled INTEGER NOT NULL DEFAULT 1,
        is_default INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (fractal_id, name)
      );
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'comments and their tags',
    // Tags get their own table (not a JSON column): comment(tags=…), ?tag= filters and tag
    // counts are indexed look-ups, and bulk add/remove is one INSERT/DELETE. fractal_id is copied
    // into comment_tags so per-fractal tag look-ups use one index. Deleting a fractal removes its
    // comments and their tags (cascade).
    sql: `
      CREATE TABLE comments (
        id TEXT PRIMARY KEY,
        fractal_id TEXT NOT NULL REFERENCES fractals(id) ON DELETE CASCADE,
        log_id TEXT NOT NULL,
        log_timestamp TEXT NOT NULL,
        content TEXT NOT NULL,
        content_folded TEXT NOT NULL,
        author TEXT NOT NULL,
        author_type TEXT NOT NULL CHECK (author_type IN ('user', 'api_key')),
        author_user_id TEXT REFERENCES users(id) ON DELETE SET NULL,
        author_key_id TEXT REFERENCES api_keys(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX comments_log ON comments(log_id, fractal_id);
      CREATE INDEX comments_fractal_time ON comments(fractal_id, log_timestamp);
      CREATE TABLE comment_tags (
        comment_id TEXT NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
        fractal_id TEXT NOT NULL REFERENCES fractals(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (comment_id, tag)
      );
      CREATE INDEX comment_tags_fractal_tag ON comment_tags(fractal_id, tag);
    `,
  },
  {
    version: 3,
    name: 'dictionaries',
    // User-managed lookup tables read by match() (query-language.md §3.11). Their definition lives
    // here; their rows live in the engine (`dictionary_rows`), where a query joins them. A
    // dictionary belongs to one fractal or one prism, or to everyone (both null: global); deleting
    // the fractal or prism deletes it. `generation` is the row set queries read: replacing every
    // row writes a new generation and then switches to it, so a query never sees half a replace.
    sql: `
      CREATE TABLE dictionaries (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        columns TEXT NOT NULL,
        key_columns TEXT NOT NULL,
        generation INTEGER NOT NULL DEFAULT 1,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK (fractal_id IS NULL OR prism_id IS NULL)
      );
      CREATE UNIQUE INDEX dictionaries_scope_name ON dictionaries(coalesce(fractal_id, ''), coalesce(prism_id, ''), name COLLATE NOCASE);
    `,
  },
  {
    version: 4,
    name: 'notebooks and their sections',
    // Investigation write-ups of one fractal or one prism (deleting it deletes them). Sections keep
    // their order in `position` (0..n-1, rewritten by a reorder) and two counters: `version` for
    // what people edit (title, content, tags), `results_version` for the stored results, so a
    // query run never makes someone's open edit of the text stale. `results` is the snapshot kept
    // as evidence (JSON text), independent of the logs, which may age out. `version` of the
    // notebook counts its own changes: name, tags, range, variables, sections added, moved, removed.
    sql: `
      CREATE TABLE notebooks (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        tags TEXT NOT NULL DEFAULT '[]',
        variables TEXT NOT NULL DEFAULT '[]',
        time_range TEXT NOT NULL DEFAULT '24h',
        time_start TEXT,
        time_end TEXT,
        version INTEGER NOT NULL DEFAULT 1,
        created_by TEXT NOT NULL,
        updated_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK ((fractal_id IS NULL) <> (prism_id IS NULL))
      );
      CREATE UNIQUE INDEX notebooks_scope_name ON notebooks(coalesce(fractal_id, ''), coalesce(prism_id, ''), name COLLATE NOCASE);
      CREATE TABLE notebook_sections (
        id TEXT PRIMARY KEY,
        notebook_id TEXT NOT NULL REFERENCES notebooks(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        section_type TEXT NOT NULL CHECK (section_type IN ('markdown', 'query', 'ai_summary', 'comment_context')),
        title TEXT NOT NULL DEFAULT '',
        content TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '[]',
        version INTEGER NOT NULL DEFAULT 1,
        results TEXT,
        results_version INTEGER NOT NULL DEFAULT 0,
        created_by TEXT NOT NULL,
        updated_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX notebook_sections_order ON notebook_sections(notebook_id, position);
    `,
  },
];
