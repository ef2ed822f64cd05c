// Versioned metadata schema. Never edit an applied migration: add the next version.
// A migration may also `run` code after its SQL, in the same transaction, where rows must be
// rewritten (a rewrite the code of a domain does: that code must then stay as it was too).
import { addSyslogNgNumbersToDefault } from '../normalizers/migrate-default-syslog-ng.ts';
import { migrateTokenRules } from '../normalizers/migrate-token-rules.ts';
import { addWindowsNormalizer } from '../normalizers/windows-normalizer.ts';
import type { Db } from './sqlite.ts';

export const SQLITE_MIGRATIONS: Array<{ version: number; name: string; sql: string; run?: (db: Db) => void }> = [
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
  {
    version: 5,
    name: 'alerts, their actions, executions and the delivery outbox',
    // An alert belongs to one fractal or one prism (deleting it deletes the alert). `cursor` is the
    // ingest time up to which the engine has evaluated it (null: not yet). Feed-sourced alerts carry
    // `feed_id`, `source_path` and `source_rule_id` (the feeds domain syncs them through alerts-logic).
    // Actions are defined once per fractal or prism (or for everyone: both null) and attached to
    // alerts through one link table per kind, so deleting an action or an alert drops its links.
    // Secrets (webhook auth, the SMTP password) are sealed with the secret box. An execution is one
    // firing; its `payload` (the firing's context and results) is what every delivery renders from,
    // and `alert_deliveries` is the durable outbox: one row per action of the firing, written in the
    // same transaction that advances the alert's cursor.
    sql: `
      CREATE TABLE alerts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        query_string TEXT NOT NULL,
        alert_type TEXT NOT NULL CHECK (alert_type IN ('event', 'compound')),
        severity TEXT NOT NULL,
        labels TEXT NOT NULL DEFAULT '[]',
        reference_links TEXT NOT NULL DEFAULT '[]',
        enabled INTEGER NOT NULL DEFAULT 1,
        throttle_time_seconds INTEGER NOT NULL DEFAULT 0,
        throttle_field TEXT NOT NULL DEFAULT '',
        feed_id TEXT,
        source_path TEXT,
        source_rule_id TEXT,
        cursor TEXT,
        last_evaluated_at TEXT,
        last_execution_ms INTEGER,
        last_triggered TEXT,
        last_match_count INTEGER,
        failure_count INTEGER NOT NULL DEFAULT 0,
        last_error TEXT NOT NULL DEFAULT '',
        disabled_reason TEXT NOT NULL DEFAULT '',
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK ((fractal_id IS NULL) != (prism_id IS NULL))
      );
      CREATE INDEX alerts_fractal ON alerts(fractal_id);
      CREATE INDEX alerts_prism ON alerts(prism_id);
      CREATE INDEX alerts_feed ON alerts(feed_id, source_path);
      CREATE INDEX alerts_enabled ON alerts(enabled);

      CREATE TABLE webhook_actions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        method TEXT NOT NULL DEFAULT 'POST',
        headers TEXT NOT NULL DEFAULT '{}',
        auth_type TEXT NOT NULL DEFAULT 'none' CHECK (auth_type IN ('none', 'bearer', 'basic')),
        auth_sealed TEXT NOT NULL DEFAULT '',
        timeout_seconds INTEGER NOT NULL DEFAULT 30,
        retry_count INTEGER NOT NULL DEFAULT 3,
        include_alert_link INTEGER NOT NULL DEFAULT 1,
        body_mode TEXT NOT NULL DEFAULT 'envelope' CHECK (body_mode IN ('envelope', 'template')),
        body_template TEXT NOT NULL DEFAULT '',
        content_type TEXT NOT NULL DEFAULT 'application/json',
        enabled INTEGER NOT NULL DEFAULT 1,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK (fractal_id IS NULL OR prism_id IS NULL)
      );
      CREATE TABLE email_actions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        recipients TEXT NOT NULL DEFAULT '[]',
        subject_template TEXT NOT NULL DEFAULT '',
        body_template TEXT NOT NULL DEFAULT '',
        enabled INTEGER NOT NULL DEFAULT 1,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK (fractal_id IS NULL OR prism_id IS NULL)
      );
      CREATE TABLE fractal_actions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        target_fractal_id TEXT NOT NULL REFERENCES fractals(id) ON DELETE CASCADE,
        preserve_timestamp INTEGER NOT NULL DEFAULT 1,
        add_alert_context INTEGER NOT NULL DEFAULT 1,
        max_logs_per_trigger INTEGER NOT NULL DEFAULT 1000,
        enabled INTEGER NOT NULL DEFAULT 1,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK (fractal_id IS NULL OR prism_id IS NULL)
      );
      CREATE TABLE dictionary_actions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        dictionary_name TEXT NOT NULL,
        key_field TEXT NOT NULL DEFAULT '',
        value_fields TEXT NOT NULL DEFAULT '[]',
        max_logs_per_trigger INTEGER NOT NULL DEFAULT 1000,
        enabled INTEGER NOT NULL DEFAULT 1,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK (fractal_id IS NULL OR prism_id IS NULL)
      );
      CREATE UNIQUE INDEX webhook_actions_scope_name ON webhook_actions(coalesce(fractal_id, ''), coalesce(prism_id, ''), name COLLATE NOCASE);
      CREATE UNIQUE INDEX email_actions_scope_name ON email_actions(coalesce(fractal_id, ''), coalesce(prism_id, ''), name COLLATE NOCASE);
      CREATE UNIQUE INDEX fractal_actions_scope_name ON fractal_actions(coalesce(fractal_id, ''), coalesce(prism_id, ''), name COLLATE NOCASE);
      CREATE UNIQUE INDEX dictionary_actions_scope_name ON dictionary_actions(coalesce(fractal_id, ''), coalesce(prism_id, ''), name COLLATE NOCASE);

      CREATE TABLE alert_webhook_actions (
        alert_id TEXT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
        action_id TEXT NOT NULL REFERENCES webhook_actions(id) ON DELETE CASCADE,
        PRIMARY KEY (alert_id, action_id)
      );
      CREATE TABLE alert_email_actions (
        alert_id TEXT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
        action_id TEXT NOT NULL REFERENCES email_actions(id) ON DELETE CASCADE,
        PRIMARY KEY (alert_id, action_id)
      );
      CREATE TABLE alert_fractal_actions (
        alert_id TEXT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
        action_id TEXT NOT NULL REFERENCES fractal_actions(id) ON DELETE CASCADE,
        PRIMARY KEY (alert_id, action_id)
      );
      CREATE TABLE alert_dictionary_actions (
        alert_id TEXT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
        action_id TEXT NOT NULL REFERENCES dictionary_actions(id) ON DELETE CASCADE,
        PRIMARY KEY (alert_id, action_id)
      );

      CREATE TABLE smtp_settings (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        host TEXT NOT NULL,
        port INTEGER NOT NULL,
        username TEXT NOT NULL DEFAULT '',
        password_sealed TEXT NOT NULL DEFAULT '',
        from_address TEXT NOT NULL,
        tls_mode TEXT NOT NULL CHECK (tls_mode IN ('none', 'starttls', 'tls')),
        updated_at TEXT NOT NULL
      );

      CREATE TABLE alert_executions (
        id TEXT PRIMARY KEY,
        alert_id TEXT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
        triggered_at TEXT NOT NULL,
        window_start TEXT NOT NULL,
        window_end TEXT NOT NULL,
        match_count INTEGER NOT NULL,
        throttled INTEGER NOT NULL DEFAULT 0,
        limit_hit INTEGER NOT NULL DEFAULT 0,
        duration_ms INTEGER NOT NULL,
        payload TEXT
      );
      CREATE INDEX alert_executions_alert_time ON alert_executions(alert_id, triggered_at);

      CREATE TABLE alert_deliveries (
        id TEXT PRIMARY KEY,
        execution_id TEXT NOT NULL REFERENCES alert_executions(id) ON DELETE CASCADE,
        action_kind TEXT NOT NULL CHECK (action_kind IN ('webhook', 'email', 'fractal', 'dictionary')),
        action_id TEXT NOT NULL,
        action_name TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        status_code INTEGER,
        error TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT '',
        duration_ms INTEGER,
        created_at TEXT NOT NULL,
        finished_at TEXT
      );
      CREATE INDEX alert_deliveries_pending ON alert_deliveries(status, next_attempt_at);
      CREATE INDEX alert_deliveries_execution ON alert_deliveries(execution_id);

      CREATE TABLE alert_throttles (
        alert_id TEXT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
        throttle_key TEXT NOT NULL,
        until TEXT NOT NULL,
        PRIMARY KEY (alert_id, throttle_key)
      );
    `,
  },
  {
    version: 6,
    name: 'normalizers and feeds',
    // Named field-name rule sets (conventions.md "Normalizers"), applied by ingest tokens and
    // feeds. The shipped default is inserted here; the rule lists tokens carried before move into
    // normalizers of their own (normalizers/migrate-token-rules.ts), after which the column goes.
    // A token applies its normalizer_id, or with normalization on and no id the default one.
    // Feeds ("Feeds and Sigma"): a git repository or folder whose rule files become alerts of one
    // fractal or prism; `feed_rules` is the catalog of the last sync, every rule file with what
    // became of it (imported, or skipped with the reason), read by the skipped list and the ATT&CK
    // coverage view. The token is sealed (storage/secret-box.ts), never stored in clear.
    sql: `
      CREATE TABLE normalizers (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        description TEXT NOT NULL DEFAULT '',
        transforms TEXT NOT NULL DEFAULT '[]',
        field_mappings TEXT NOT NULL DEFAULT '[]',
        value_mappings TEXT NOT NULL DEFAULT '[]',
        timestamp_fields TEXT NOT NULL DEFAULT '[]',
        is_default INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 1,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX normalizers_one_default ON normalizers(is_default) WHERE is_default = 1;
      ALTER TABLE ingest_tokens ADD COLUMN normalizer_id TEXT REFERENCES normalizers(id);
      CREATE TABLE feeds (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        repo_url TEXT NOT NULL,
        branch TEXT NOT NULL DEFAULT 'main',
        path TEXT NOT NULL DEFAULT '',
        auth_token_sealed TEXT,
        normalizer_id TEXT REFERENCES normalizers(id),
        sync_schedule TEXT NOT NULL DEFAULT 'daily' CHECK (sync_schedule IN ('hourly', 'daily', 'weekly', 'monthly', 'never')),
        min_severity TEXT NOT NULL DEFAULT 'informational' CHECK (min_severity IN ('informational', 'low', 'medium', 'high', 'critical')),
        min_status TEXT NOT NULL DEFAULT 'experimental' CHECK (min_status IN ('unsupported', 'deprecated', 'experimental', 'test', 'stable')),
        enabled INTEGER NOT NULL DEFAULT 1,
        last_sync_at TEXT,
        last_sync_status TEXT CHECK (last_sync_status IN ('ok', 'failed')),
        last_sync_error TEXT,
        last_sync_commit TEXT,
        last_sync_ms INTEGER,
        imported_count INTEGER NOT NULL DEFAULT 0,
        skipped_count INTEGER NOT NULL DEFAULT 0,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK ((fractal_id IS NULL) <> (prism_id IS NULL))
      );
      CREATE UNIQUE INDEX feeds_scope_name ON feeds(coalesce(fractal_id, ''), coalesce(prism_id, ''), name COLLATE NOCASE);
      CREATE TABLE feed_rules (
        feed_id TEXT NOT NULL REFERENCES feeds(id) ON DELETE CASCADE,
        source_path TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('sigma', 'alert', 'unknown')),
        rule_id TEXT,
        title TEXT NOT NULL DEFAULT '',
        level TEXT,
        status TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        imported INTEGER NOT NULL,
        reason_code TEXT,
        reason TEXT,
        PRIMARY KEY (feed_id, source_path)
      );
    `,
    run: migrateTokenRules,
  },
  {
    version: 7,
    name: 'dashboards, their widgets and shared links',
    // A dashboard belongs to one fractal or one prism (deleting it deletes the dashboard). `version`
    // counts its own fields, variables and the set of its widgets (a stale PUT is a 409);
    // `revision` counts every change, layout and stored results included (what a cached public view
    // was built from). A widget's `version` counts edits of what it shows (title, query, chart,
    // range), not its cells on the grid. `results` is the last run with the stored settings (JSON
    // text), `results_key` what it was run with (query, range, variables), so a changed widget is
    // never shown stale results as its own. A shared link stores only its token's SHA-256.
    sql: `
      CREATE TABLE dashboards (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        fractal_id TEXT REFERENCES fractals(id) ON DELETE CASCADE,
        prism_id TEXT REFERENCES prisms(id) ON DELETE CASCADE,
        variables TEXT NOT NULL DEFAULT '[]',
        time_range TEXT NOT NULL DEFAULT '24h',
        time_start TEXT,
        time_end TEXT,
        refresh_interval_s INTEGER NOT NULL DEFAULT 0,
        shared_hide_queries INTEGER NOT NULL DEFAULT 1,
        version INTEGER NOT NULL DEFAULT 1,
        revision INTEGER NOT NULL DEFAULT 1,
        created_by TEXT NOT NULL,
        updated_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK ((fractal_id IS NULL) <> (prism_id IS NULL))
      );
      CREATE UNIQUE INDEX dashboards_scope_name ON dashboards(coalesce(fractal_id, ''), coalesce(prism_id, ''), name COLLATE NOCASE);
      CREATE TABLE dashboard_widgets (
        id TEXT PRIMARY KEY,
        dashboard_id TEXT NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
        title TEXT NOT NULL DEFAULT '',
        query_content TEXT NOT NULL DEFAULT '',
        chart_type TEXT NOT NULL DEFAULT 'auto',
        chart_config TEXT NOT NULL DEFAULT '{}',
        time_range TEXT,
        time_start TEXT,
        time_end TEXT,
        pos_x INTEGER NOT NULL,
        pos_y INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        results TEXT,
        results_key TEXT,
        executed_at TEXT,
        created_by TEXT NOT NULL,
        updated_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX dashboard_widgets_dashboard ON dashboard_widgets(dashboard_id);
      CREATE TABLE dashboard_shared_links (
        id TEXT PRIMARY KEY,
        dashboard_id TEXT NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
        label TEXT NOT NULL DEFAULT '',
        token_hash TEXT NOT NULL UNIQUE,
        token_prefix TEXT NOT NULL,
        expires_at TEXT,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT
      );
      CREATE INDEX dashboard_shared_links_dashboard ON dashboard_shared_links(dashboard_id);
    `,
  },
  {
    version: 8,
    name: 'syslog listeners',
    // A listener names the ingest token whose fractal, parser, normalizer and timestamp fields apply
    // (deleting the token, or its fractal, deletes the listener). The TLS certificate and key are
    // sealed with the secret box and never returned. `time_zone` (an addition to the spec) is the
    // IANA zone RFC 3164 times are read in.
    sql: `
      CREATE TABLE syslog_listeners (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        protocol TEXT NOT NULL CHECK (protocol IN ('udp', 'tcp', 'tls')),
        bind_address TEXT NOT NULL,
        port INTEGER NOT NULL,
        ingest_token_id TEXT NOT NULL REFERENCES ingest_tokens(id) ON DELETE CASCADE,
        tls_cert_sealed TEXT,
        tls_key_sealed TEXT,
        time_zone TEXT NOT NULL DEFAULT 'UTC',
        enabled INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 9,
    name: 'evidence: custody log and imports',
    // The custody log (evidence/custody/): one chain of entries per fractal, each holding the
    // previous entry's hash; `custody_heads` the last entry of each chain with an HMAC seal. There
    // is no foreign key to the fractal: the record of what was brought in or taken out outlives
    // the fractal. Triggers refuse changing or removing an entry, and moving a head anywhere but
    // one entry forward. Imports (evidence/imports/): one row per uploaded file, its progress and
    // outcome; `phase` says where a restart finds it (receiving: the upload was cut off;
    // processing: resumed from `resume_records` records, which are on the spool).
    sql: `
      CREATE TABLE custody_entries (
        id TEXT PRIMARY KEY,
        fractal_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('import', 'export', 'case-import')),
        recorded_at TEXT NOT NULL,
        actor TEXT NOT NULL,
        details TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        UNIQUE (fractal_id, seq)
      );
      CREATE TABLE custody_heads (
        fractal_id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        hash TEXT NOT NULL,
        seal TEXT NOT NULL
      );
      CREATE TRIGGER custody_entries_no_update BEFORE UPDATE ON custody_entries
        BEGIN SELECT RAISE(ABORT, 'custody log entries cannot be changed'); END;
      CREATE TRIGGER custody_entries_no_delete BEFORE DELETE ON custody_entries
        BEGIN SELECT RAISE(ABORT, 'custody log entries cannot be removed'); END;
      CREATE TRIGGER custody_heads_no_delete BEFORE DELETE ON custody_heads
        BEGIN SELECT RAISE(ABORT, 'custody log heads cannot be removed'); END;
      CREATE TRIGGER custody_heads_forward_only BEFORE UPDATE ON custody_heads
        WHEN NEW.seq <> OLD.seq + 1 OR NEW.fractal_id <> OLD.fractal_id
        BEGIN SELECT RAISE(ABORT, 'a custody log head only moves one entry forward'); END;
      CREATE TABLE imports (
        id TEXT PRIMARY KEY,
        fractal_id TEXT NOT NULL REFERENCES fractals(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        normalizer_id TEXT,
        timestamp_fields TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
        phase TEXT NOT NULL CHECK (phase IN ('receiving', 'processing', 'alerts', 'finished')),
        format TEXT,
        compression TEXT,
        size_bytes INTEGER NOT NULL DEFAULT 0,
        sha256 TEXT,
        bytes_read INTEGER NOT NULL DEFAULT 0,
        accepted INTEGER NOT NULL DEFAULT 0,
        rejected INTEGER NOT NULL DEFAULT 0,
        resume_records INTEGER NOT NULL DEFAULT 0,
        errors TEXT NOT NULL DEFAULT '[]',
        alerts TEXT,
        oldest TEXT,
        newest TEXT,
        file_path TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX imports_fractal ON imports(fractal_id, created_at);
    `,
  },
  {
    version: 10,
    name: 'archive tier',
    // The archive's catalog (archive/): its settings (one row; the S3 secret sealed), the spool
    // position it has archived up to, and per fractal the Iceberg table it writes: snapshots kept,
    // one manifest per ingest day, the data files. The catalog is what search, restore, retention
    // and the next commit read; the Iceberg files in the archive say the same for other readers.
    // `archive_garbage` holds keys no current snapshot references, deleted once older snapshots
    // that may still name them have expired. No foreign key to fractals: an archive outlives them.
    sql: `
      CREATE TABLE archive_settings (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        enabled INTEGER NOT NULL DEFAULT 0,
        backend TEXT NOT NULL DEFAULT 'local' CHECK (backend IN ('local', 's3')),
        path TEXT,
        s3_endpoint TEXT,
        s3_bucket TEXT,
        s3_prefix TEXT NOT NULL DEFAULT '',
        s3_region TEXT,
        s3_access_key TEXT,
        s3_secret_sealed TEXT,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE archive_cursor (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        segment INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE archive_tables (
        fractal_id TEXT PRIMARY KEY,
        table_uuid TEXT NOT NULL,
        metadata_version INTEGER NOT NULL,
        metadata_log TEXT NOT NULL DEFAULT '[]',
        last_maintenance TEXT
      );
      CREATE TABLE archive_snapshots (
        fractal_id TEXT NOT NULL,
        snapshot_id INTEGER NOT NULL,
        parent_id INTEGER,
        sequence_number INTEGER NOT NULL,
        timestamp_ms INTEGER NOT NULL,
        manifest_list TEXT NOT NULL,
        summary TEXT NOT NULL,
        PRIMARY KEY (fractal_id, snapshot_id)
      );
      CREATE TABLE archive_manifests (
        fractal_id TEXT NOT NULL,
        day TEXT NOT NULL,
        key TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        snapshot_id INTEGER NOT NULL,
        sequence_number INTEGER NOT NULL,
        min_sequence_number INTEGER NOT NULL,
        added_files INTEGER NOT NULL,
        added_rows INTEGER NOT NULL,
        existing_files INTEGER NOT NULL,
        existing_rows INTEGER NOT NULL,
        PRIMARY KEY (fractal_id, day)
      );
      CREATE TABLE archive_files (
        fractal_id TEXT NOT NULL,
        key TEXT NOT NULL,
        day TEXT NOT NULL,
        rows INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        min_ts_us INTEGER NOT NULL,
        max_ts_us INTEGER NOT NULL,
        snapshot_id INTEGER NOT NULL,
        sequence_number INTEGER NOT NULL,
        PRIMARY KEY (fractal_id, key)
      );
      CREATE INDEX archive_files_day ON archive_files(fractal_id, day);
      CREATE TABLE archive_garbage (
        key TEXT PRIMARY KEY,
        removed_at_ms INTEGER NOT NULL
      );
      CREATE TABLE archive_jobs (
        id TEXT PRIMARY KEY,
        fractal_id TEXT NOT NULL,
        start TEXT NOT NULL,
        end TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
        restored INTEGER NOT NULL DEFAULT 0,
        skipped INTEGER NOT NULL DEFAULT 0,
        files_total INTEGER NOT NULL DEFAULT 0,
        files_done INTEGER NOT NULL DEFAULT 0,
        damaged_files TEXT NOT NULL DEFAULT '[]',
        error TEXT,
        created_by TEXT,
        created_at TEXT NOT NULL,
        finished_at TEXT
      );
    `,
  },
  {
    version: 12,
    name: 'default normalizer: syslog-ng numeric names',
    // The shipped default maps syslog-ng's LEVEL_NUM, FACILITY_NUM and PRI (normalizers/
    // migrate-default-syslog-ng.ts), where no mapping of it takes those names already.
    sql: '',
    run: addSyslogNgNumbersToDefault,
  },
  {
    version: 13,
    name: 'case jobs',
    // Case exports and imports as jobs that outlive a restart (cases/case-jobs-store.ts).
    sql: `
      CREATE TABLE case_jobs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('export', 'import')),
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
        phase TEXT NOT NULL,
        progress REAL NOT NULL DEFAULT 0,
        events_total INTEGER NOT NULL DEFAULT 0,
        events_done INTEGER NOT NULL DEFAULT 0,
        bytes_done INTEGER NOT NULL DEFAULT 0,
        fractal_id TEXT,
        fractal_name TEXT NOT NULL,
        errors TEXT NOT NULL DEFAULT '[]',
        archive TEXT,
        created_by TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        target_fractal_id TEXT
      );
      CREATE INDEX case_jobs_started ON case_jobs(started_at);
    `,
  },
  {
    version: 17,
    name: 'alert firings carried in by a case archive',
    // A firing restored from a case archive is evidence of that case: the 30-day pruning of this
    // appliance's own firings (and of their delivered payloads) must not reach it.
    sql: `ALTER TABLE alert_executions ADD COLUMN from_case INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    version: 18,
    name: 'shipped Windows event log normalizer',
    // Dropped .evtx files get the names Sigma rules use without a normalizer made by hand
    // (normalizers/windows-normalizer.ts); an install that has a normalizer of that name keeps it.
    sql: '',
    run: addWindowsNormalizer,
  },
];
