-- A car repair garage's records, served by the sql plugin as plugin "garage" (tools
-- garage_garage_v1_<table>_<operation>). Part of T1's "trades" catalogue.
CREATE TABLE customers (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, phone TEXT, email TEXT);
CREATE TABLE vehicles (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), registration TEXT NOT NULL UNIQUE, make TEXT NOT NULL, model TEXT NOT NULL, year INTEGER, mileage INTEGER);
CREATE TABLE job_cards (id INTEGER PRIMARY KEY, vehicle_id INTEGER NOT NULL REFERENCES vehicles(id), opened_on TEXT NOT NULL, complaint TEXT NOT NULL, technician_id INTEGER, status TEXT NOT NULL DEFAULT 'open');
CREATE TABLE technicians (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, grade TEXT, hourly_rate REAL);
CREATE TABLE parts (id INTEGER PRIMARY KEY, part_number TEXT NOT NULL UNIQUE, description TEXT NOT NULL, bin_location TEXT, quantity_on_hand INTEGER NOT NULL DEFAULT 0, unit_cost REAL);
CREATE TABLE part_usages (id INTEGER PRIMARY KEY, job_card_id INTEGER NOT NULL REFERENCES job_cards(id), part_id INTEGER NOT NULL REFERENCES parts(id), quantity INTEGER NOT NULL);
CREATE TABLE labour_entries (id INTEGER PRIMARY KEY, job_card_id INTEGER NOT NULL REFERENCES job_cards(id), technician_id INTEGER NOT NULL REFERENCES technicians(id), hours REAL NOT NULL, operation TEXT);
CREATE TABLE estimates (id INTEGER PRIMARY KEY, vehicle_id INTEGER NOT NULL REFERENCES vehicles(id), issued_on TEXT NOT NULL, total REAL NOT NULL, accepted BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE mot_tests (id INTEGER PRIMARY KEY, vehicle_id INTEGER NOT NULL REFERENCES vehicles(id), tested_on TEXT NOT NULL, result TEXT NOT NULL, advisories TEXT, expires_on TEXT);
CREATE TABLE service_reminders (id INTEGER PRIMARY KEY, vehicle_id INTEGER NOT NULL REFERENCES vehicles(id), due_on TEXT NOT NULL, kind TEXT NOT NULL, sent BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE courtesy_cars (id INTEGER PRIMARY KEY, registration TEXT NOT NULL UNIQUE, lent_to_customer_id INTEGER REFERENCES customers(id), lent_on TEXT, back_on TEXT);
CREATE TABLE warranty_claims (id INTEGER PRIMARY KEY, job_card_id INTEGER NOT NULL REFERENCES job_cards(id), manufacturer TEXT NOT NULL, amount REAL, status TEXT NOT NULL DEFAULT 'submitted');

INSERT INTO customers (full_name, phone, email) VALUES ('Janet Moss', '555-0401', 'janet@example.com'), ('Kofi Mensah', '555-0402', NULL);
INSERT INTO vehicles (customer_id, registration, make, model, year, mileage) VALUES (1, 'GF19 XYZ', 'Ford', 'Focus', 2019, 48200), (2, 'BD65 KLM', 'Toyota', 'Yaris', 2015, 91500);
INSERT INTO job_cards (vehicle_id, opened_on, complaint, technician_id, status) VALUES (1, '2026-11-27', 'squealing brakes', 1, 'open'), (2, '2026-11-25', 'annual service', 2, 'done');
INSERT INTO technicians (full_name, grade, hourly_rate) VALUES ('Mick Doyle', 'master', 85), ('Ana Costa', 'level 3', 65);
INSERT INTO parts (part_number, description, bin_location, quantity_on_hand, unit_cost) VALUES ('BP-FOC-F', 'front brake pads, Ford Focus', 'A3', 4, 38.5), ('OF-TY-01', 'oil filter, Toyota', 'B1', 12, 6.2);
INSERT INTO mot_tests (vehicle_id, tested_on, result, advisories, expires_on) VALUES (2, '2026-03-14', 'pass', 'rear tyre close to limit', '2027-03-13');
