-- A city museum's collection, exhibition and visitor records, served by the sql plugin as
-- plugin "museum" (tools museum_museum_v1_<table>_<operation>). Part of T1's "civic"
-- catalogue.
CREATE TABLE galleries (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, floor INTEGER NOT NULL, theme TEXT, climate_controlled BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE collection_objects (id INTEGER PRIMARY KEY, accession_number TEXT NOT NULL UNIQUE, title TEXT NOT NULL, object_type TEXT, maker TEXT, date_made TEXT, material TEXT, gallery_id INTEGER REFERENCES galleries(id), on_display BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE acquisitions (id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES collection_objects(id), acquired_on TEXT NOT NULL, method TEXT NOT NULL, source TEXT, price REAL);
CREATE TABLE exhibitions (id INTEGER PRIMARY KEY, title TEXT NOT NULL, gallery_id INTEGER REFERENCES galleries(id), opens_on TEXT NOT NULL, closes_on TEXT NOT NULL, curator TEXT, ticketed BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE object_loans (id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES collection_objects(id), institution TEXT NOT NULL, direction TEXT NOT NULL, starts_on TEXT NOT NULL, ends_on TEXT, insured_value REAL);
CREATE TABLE condition_checks (id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES collection_objects(id), checked_on TEXT NOT NULL, condition TEXT NOT NULL, checked_by TEXT, notes TEXT);
CREATE TABLE conservation_treatments (id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES collection_objects(id), conservator TEXT NOT NULL, started_on TEXT NOT NULL, treatment TEXT NOT NULL, completed_on TEXT);
CREATE TABLE ticket_sales (id INTEGER PRIMARY KEY, exhibition_id INTEGER REFERENCES exhibitions(id), visit_date TEXT NOT NULL, ticket_type TEXT NOT NULL, quantity INTEGER NOT NULL DEFAULT 1, price REAL NOT NULL);
CREATE TABLE guided_tours (id INTEGER PRIMARY KEY, guide TEXT NOT NULL, starts_at TEXT NOT NULL, language TEXT NOT NULL DEFAULT 'English', group_size INTEGER NOT NULL, school_group BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE volunteers (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, phone TEXT, role TEXT NOT NULL, hours_per_week INTEGER, dbs_checked BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE friends_memberships (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, email TEXT, tier TEXT NOT NULL, joined_on TEXT NOT NULL, renews_on TEXT NOT NULL, gift_aid BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE image_requests (id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES collection_objects(id), requester TEXT NOT NULL, purpose TEXT NOT NULL, fee REAL, approved BOOLEAN);

INSERT INTO galleries (name, floor, theme, climate_controlled) VALUES ('Egypt', 1, 'ancient world', 1), ('Industrial Town', 0, 'local history', 0), ('Temporary Gallery', 2, NULL, 1);
INSERT INTO collection_objects (accession_number, title, object_type, maker, date_made, material, gallery_id, on_display) VALUES ('1921.44', 'Painted coffin of Nesmin', 'coffin', NULL, 'c. 300 BC', 'wood', 1, 1), ('1988.102', 'Mill owner''s pocket watch', 'watch', 'J. W. Benson', '1871', 'gold', 2, 0), ('2003.7', 'Harbour at dusk', 'painting', 'Edith Lowe', '1912', 'oil on canvas', NULL, 0);
INSERT INTO exhibitions (title, gallery_id, opens_on, closes_on, curator, ticketed) VALUES ('Threads: textiles of the mills', 3, '2026-10-01', '2027-02-28', 'Dr. Ruth Ames', 1);
INSERT INTO object_loans (object_id, institution, direction, starts_on, ends_on, insured_value) VALUES (3, 'National Gallery of Art', 'out', '2026-09-01', '2027-01-15', 45000);
INSERT INTO guided_tours (guide, starts_at, language, group_size, school_group) VALUES ('Alan Price', '2026-12-02T10:30:00Z', 'English', 28, 1), ('Marie Leclerc', '2026-12-05T14:00:00Z', 'French', 12, 0);
INSERT INTO volunteers (full_name, phone, role, hours_per_week, dbs_checked) VALUES ('Joan Fairley', '555-0801', 'gallery steward', 6, 1), ('Kofi Mensah', '555-0802', 'archive cataloguer', 4, 0);
