-- A town council's service records, served by the sql plugin as plugin "council" (tools
-- council_council_v1_<table>_<operation>). Part of T1's "trades" catalogue.
CREATE TABLE residents (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, address TEXT NOT NULL, ward TEXT, email TEXT);
CREATE TABLE planning_applications (id INTEGER PRIMARY KEY, reference TEXT NOT NULL UNIQUE, site_address TEXT NOT NULL, proposal TEXT NOT NULL, applicant TEXT, received_on TEXT NOT NULL, decision TEXT);
CREATE TABLE parking_permits (id INTEGER PRIMARY KEY, resident_id INTEGER NOT NULL REFERENCES residents(id), zone TEXT NOT NULL, vehicle_registration TEXT NOT NULL, valid_until TEXT NOT NULL);
CREATE TABLE penalty_charge_notices (id INTEGER PRIMARY KEY, vehicle_registration TEXT NOT NULL, issued_at TEXT NOT NULL, street TEXT NOT NULL, contravention_code TEXT NOT NULL, amount REAL NOT NULL, paid BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE waste_collections (id INTEGER PRIMARY KEY, ward TEXT NOT NULL, weekday INTEGER NOT NULL, stream TEXT NOT NULL, crew TEXT);
CREATE TABLE missed_bin_reports (id INTEGER PRIMARY KEY, resident_id INTEGER REFERENCES residents(id), address TEXT NOT NULL, stream TEXT NOT NULL, reported_on TEXT NOT NULL, resolved BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE highway_defects (id INTEGER PRIMARY KEY, street TEXT NOT NULL, kind TEXT NOT NULL, reported_on TEXT NOT NULL, depth_mm INTEGER, repaired_on TEXT);
CREATE TABLE council_tax_accounts (id INTEGER PRIMARY KEY, resident_id INTEGER NOT NULL REFERENCES residents(id), band TEXT NOT NULL, annual_charge REAL NOT NULL, single_person_discount BOOLEAN NOT NULL DEFAULT 0, arrears REAL NOT NULL DEFAULT 0);
CREATE TABLE premises_licences (id INTEGER PRIMARY KEY, business_name TEXT NOT NULL, address TEXT NOT NULL, licence_kind TEXT NOT NULL, granted_on TEXT, expires_on TEXT);
CREATE TABLE committee_meetings (id INTEGER PRIMARY KEY, committee TEXT NOT NULL, meets_at TEXT NOT NULL, venue TEXT, agenda_url TEXT);
CREATE TABLE freedom_of_information_requests (id INTEGER PRIMARY KEY, requester_email TEXT NOT NULL, subject TEXT NOT NULL, received_on TEXT NOT NULL, due_on TEXT NOT NULL, answered BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE allotment_plots (id INTEGER PRIMARY KEY, site TEXT NOT NULL, plot_number TEXT NOT NULL, tenant_resident_id INTEGER REFERENCES residents(id), annual_rent REAL);

INSERT INTO residents (full_name, address, ward, email) VALUES ('Peter Quinn', '12 Elm Road', 'North', 'pq@example.com'), ('Sofia Rossi', '3 Church Lane', 'East', 'sofia@example.com');
INSERT INTO highway_defects (street, kind, reported_on, depth_mm, repaired_on) VALUES ('Elm Road', 'pothole', '2026-11-18', 60, NULL), ('Station Street', 'broken kerb', '2026-11-10', NULL, '2026-11-25');
INSERT INTO penalty_charge_notices (vehicle_registration, issued_at, street, contravention_code, amount) VALUES ('AB12 CDE', '2026-11-26T10:15:00Z', 'Market Street', '01', 70);
INSERT INTO waste_collections (ward, weekday, stream, crew) VALUES ('North', 2, 'recycling', 'R3'), ('North', 2, 'general waste', 'G1'), ('East', 4, 'garden waste', 'G4');
