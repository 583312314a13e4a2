-- mcpgw: report changes of PostgreSQL tables to the sql plugin (connections with listen: true).
--
-- Run this once per database (psql -f notify.sql), then, for every table whose changes the
-- gateway should see:
--
--     SELECT mcpgw_watch('public.users');
--
-- mcpgw_watch puts two triggers on the table: one per changed row (INSERT, UPDATE, DELETE),
-- which sends the row's primary key, and one per TRUNCATE. Both call mcpgw_notify, which
-- sends a JSON payload on the channel mcpgw_changes:
--
--     {"op": "UPDATE", "schema": "public", "table": "users", "id": "42", "origin": null}
--
-- "id" is the primary key's value as text (null for a TRUNCATE, or for a table without a
-- single-column primary key). "origin" is the setting mcpgw.origin of the session that made
-- the change: the gateway sets it on its own sessions, so that it does not report its own
-- writes twice (it reports them itself); null for everyone else. NOTIFY is transactional: nothing is sent for a change that
-- is rolled back. To stop watching a table:
--
--     DROP TRIGGER mcpgw_notify_row ON public.users;
--     DROP TRIGGER mcpgw_notify_truncate ON public.users;

CREATE OR REPLACE FUNCTION mcpgw_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  id text;
BEGIN
  IF TG_LEVEL = 'ROW' AND TG_NARGS > 0 THEN
    IF TG_OP = 'DELETE' THEN
      id := to_jsonb(OLD) ->> TG_ARGV[0];
    ELSE
      id := to_jsonb(NEW) ->> TG_ARGV[0];
    END IF;
  END IF;
  PERFORM pg_notify('mcpgw_changes', json_build_object(
    'op', TG_OP, 'schema', TG_TABLE_SCHEMA, 'table', TG_TABLE_NAME, 'id', id,
    'origin', current_setting('mcpgw.origin', true))::text);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION mcpgw_watch(tbl regclass) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  pk text;
BEGIN
  SELECT a.attname INTO pk
    FROM pg_index i
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
   WHERE i.indrelid = tbl AND i.indisprimary AND i.indnatts = 1;
  EXECUTE format('DROP TRIGGER IF EXISTS mcpgw_notify_row ON %s', tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS mcpgw_notify_truncate ON %s', tbl);
  IF pk IS NULL THEN
    EXECUTE format('CREATE TRIGGER mcpgw_notify_row AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION mcpgw_notify()', tbl);
  ELSE
    EXECUTE format('CREATE TRIGGER mcpgw_notify_row AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION mcpgw_notify(%L)', tbl, pk);
  END IF;
  EXECUTE format('CREATE TRIGGER mcpgw_notify_truncate AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION mcpgw_notify()', tbl);
END
$$;
