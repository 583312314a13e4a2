-- A water utility's supply and customer records, served by the sql plugin as plugin
-- "water" (tools water_water_v1_<table>_<operation>). Part of T1's "civic" catalogue.
CREATE TABLE customers (id INTEGER PRIMARY KEY, account_number TEXT NOT NULL UNIQUE, full_name TEXT NOT NULL, supply_address TEXT NOT NULL, phone TEXT, email TEXT, priority_services BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE meters (id INTEGER PRIMARY KEY, serial_number TEXT NOT NULL UNIQUE, customer_id INTEGER REFERENCES customers(id), installed_on TEXT NOT NULL, size_mm INTEGER NOT NULL DEFAULT 15, smart BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE meter_readings (id INTEGER PRIMARY KEY, meter_id INTEGER NOT NULL REFERENCES meters(id), read_on TEXT NOT NULL, reading_m3 REAL NOT NULL, estimated BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE bills (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), period_start TEXT NOT NULL, period_end TEXT NOT NULL, amount REAL NOT NULL, due_on TEXT NOT NULL, paid BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE payment_plans (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), instalment REAL NOT NULL, frequency TEXT NOT NULL, starts_on TEXT NOT NULL, active BOOLEAN NOT NULL DEFAULT 1);
CREATE TABLE leak_reports (id INTEGER PRIMARY KEY, reported_at TEXT NOT NULL, location TEXT NOT NULL, reported_by TEXT, on_customer_side BOOLEAN, severity TEXT NOT NULL DEFAULT 'medium', status TEXT NOT NULL DEFAULT 'open');
CREATE TABLE supply_interruptions (id INTEGER PRIMARY KEY, area TEXT NOT NULL, starts_at TEXT NOT NULL, expected_restore_at TEXT, reason TEXT, planned BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE water_quality_samples (id INTEGER PRIMARY KEY, sampling_point TEXT NOT NULL, sampled_at TEXT NOT NULL, chlorine_mg_l REAL, turbidity_ntu REAL, lead_ug_l REAL, coliforms_detected BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE mains (id INTEGER PRIMARY KEY, street TEXT NOT NULL, material TEXT NOT NULL, diameter_mm INTEGER NOT NULL, laid_year INTEGER, pressure_zone TEXT);
CREATE TABLE work_orders (id INTEGER PRIMARY KEY, main_id INTEGER REFERENCES mains(id), leak_report_id INTEGER REFERENCES leak_reports(id), crew TEXT, job_type TEXT NOT NULL, scheduled_on TEXT, completed BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE complaints (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), received_on TEXT NOT NULL, category TEXT NOT NULL, details TEXT, resolved BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE new_supply_applications (id INTEGER PRIMARY KEY, applicant TEXT NOT NULL, site_address TEXT NOT NULL, applied_on TEXT NOT NULL, property_type TEXT, status TEXT NOT NULL DEFAULT 'received');

INSERT INTO customers (account_number, full_name, supply_address, phone, email, priority_services) VALUES ('WA-100231', 'Brenda Tate', '12 Orchard Close', '555-0701', 'brenda@example.com', 1), ('WA-100587', 'Imran Qureshi', '3 Station Road', '555-0702', 'imran@example.com', 0);
INSERT INTO meters (serial_number, customer_id, installed_on, size_mm, smart) VALUES ('MTR-44871', 1, '2019-03-14', 15, 0), ('MTR-90012', 2, '2024-07-01', 15, 1);
INSERT INTO meter_readings (meter_id, read_on, reading_m3, estimated) VALUES (1, '2026-09-30', 1204.5, 0), (2, '2026-10-31', 310.2, 1);
INSERT INTO bills (customer_id, period_start, period_end, amount, due_on, paid) VALUES (1, '2026-04-01', '2026-09-30', 212.40, '2026-10-28', 1), (2, '2026-05-01', '2026-10-31', 188.10, '2026-11-25', 0);
INSERT INTO leak_reports (reported_at, location, reported_by, severity, status) VALUES ('2026-11-28T07:40:00Z', 'outside 8 Mill Road', 'passer-by', 'high', 'open'), ('2026-11-20T16:05:00Z', 'Church Lane verge', 'customer', 'low', 'fixed');
INSERT INTO supply_interruptions (area, starts_at, expected_restore_at, reason, planned) VALUES ('Northfield', '2026-11-29T09:00:00Z', '2026-11-29T15:00:00Z', 'main replacement', 1);
INSERT INTO mains (street, material, diameter_mm, laid_year, pressure_zone) VALUES ('Mill Road', 'cast iron', 150, 1936, 'low'), ('Station Road', 'polyethylene', 180, 2011, 'high');
