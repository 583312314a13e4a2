-- A campsite's booking and site records, served by the sql plugin as plugin "campsite"
-- (tools campsite_campsite_v1_<table>_<operation>). Pitches are tent, touring caravan,
-- motorhome or glamping pitches, some with electric hook-up and hardstanding; seasonal
-- contracts let a touring caravan stay on its pitch all season. Part of T1's "travel"
-- catalogue.
CREATE TABLE guests (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, phone TEXT, email TEXT, postcode TEXT, vehicle_registration TEXT, banned BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE pitches (id INTEGER PRIMARY KEY, pitch_code TEXT NOT NULL UNIQUE, pitch_type TEXT NOT NULL, field TEXT, electric_hookup BOOLEAN NOT NULL DEFAULT 0, hardstanding BOOLEAN NOT NULL DEFAULT 0, max_length_m REAL, dogs_allowed BOOLEAN NOT NULL DEFAULT 1, nightly_rate REAL NOT NULL);
CREATE TABLE bookings (id INTEGER PRIMARY KEY, guest_id INTEGER NOT NULL REFERENCES guests(id), pitch_id INTEGER NOT NULL REFERENCES pitches(id), arrival_on TEXT NOT NULL, departure_on TEXT NOT NULL, adults INTEGER NOT NULL DEFAULT 2, children INTEGER NOT NULL DEFAULT 0, dogs INTEGER NOT NULL DEFAULT 0, unit_type TEXT, status TEXT NOT NULL DEFAULT 'confirmed');
CREATE TABLE payments (id INTEGER PRIMARY KEY, booking_id INTEGER NOT NULL REFERENCES bookings(id), paid_on TEXT NOT NULL, amount REAL NOT NULL, kind TEXT NOT NULL, method TEXT NOT NULL);
CREATE TABLE seasonal_contracts (id INTEGER PRIMARY KEY, guest_id INTEGER NOT NULL REFERENCES guests(id), pitch_id INTEGER NOT NULL REFERENCES pitches(id), season_year INTEGER NOT NULL, season_fee REAL NOT NULL, winter_storage BOOLEAN NOT NULL DEFAULT 0, fully_paid BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE waiting_list (id INTEGER PRIMARY KEY, guest_id INTEGER NOT NULL REFERENCES guests(id), wanted_from TEXT NOT NULL, wanted_to TEXT NOT NULL, pitch_type TEXT NOT NULL, needs_hookup BOOLEAN NOT NULL DEFAULT 0, contacted BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE facilities (id INTEGER PRIMARY KEY, name TEXT NOT NULL, location TEXT, opens_at TEXT, closes_at TEXT, out_of_order BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE maintenance_jobs (id INTEGER PRIMARY KEY, facility_id INTEGER REFERENCES facilities(id), pitch_id INTEGER REFERENCES pitches(id), reported_on TEXT NOT NULL, problem TEXT NOT NULL, urgent BOOLEAN NOT NULL DEFAULT 0, fixed_on TEXT);
CREATE TABLE equipment_hire (id INTEGER PRIMARY KEY, booking_id INTEGER NOT NULL REFERENCES bookings(id), item TEXT NOT NULL, quantity INTEGER NOT NULL DEFAULT 1, hired_on TEXT NOT NULL, returned BOOLEAN NOT NULL DEFAULT 0, charge REAL NOT NULL);
CREATE TABLE bread_orders (id INTEGER PRIMARY KEY, booking_id INTEGER NOT NULL REFERENCES bookings(id), for_morning_of TEXT NOT NULL, item TEXT NOT NULL, quantity INTEGER NOT NULL, collected BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE wardens (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, mobile TEXT NOT NULL, lives_on_site BOOLEAN NOT NULL DEFAULT 0, on_duty BOOLEAN NOT NULL DEFAULT 0, first_aider BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE incidents (id INTEGER PRIMARY KEY, booking_id INTEGER REFERENCES bookings(id), warden_id INTEGER REFERENCES wardens(id), occurred_at TEXT NOT NULL, category TEXT NOT NULL, description TEXT NOT NULL, action_taken TEXT);

INSERT INTO guests (full_name, phone, email, postcode, vehicle_registration) VALUES ('Gareth Pryce', '555-0901', 'gareth@example.com', 'LL55 4UE', 'CX19 WHN'), ('Naomi Clarke', '555-0902', 'naomi@example.com', 'M20 2PL', NULL), ('Ewan and Fiona Reid', '555-0903', 'reids@example.com', 'EH9 1QT', 'SK70 RDT');
INSERT INTO pitches (pitch_code, pitch_type, field, electric_hookup, hardstanding, max_length_m, dogs_allowed, nightly_rate) VALUES ('A1', 'touring caravan', 'Top Field', 1, 1, 8.5, 1, 32.00), ('A2', 'motorhome', 'Top Field', 1, 1, 9.0, 1, 34.00), ('R7', 'tent', 'River Meadow', 0, 0, NULL, 0, 22.00), ('P1', 'glamping pod', 'Orchard', 1, 0, NULL, 0, 75.00);
INSERT INTO bookings (guest_id, pitch_id, arrival_on, departure_on, adults, children, dogs, unit_type, status) VALUES (1, 1, '2026-12-18', '2026-12-22', 2, 1, 1, 'caravan', 'confirmed'), (2, 4, '2026-12-30', '2027-01-02', 2, 0, 0, NULL, 'confirmed'), (3, 2, '2026-11-27', '2026-12-01', 2, 0, 0, 'motorhome', 'arrived');
INSERT INTO payments (booking_id, paid_on, amount, kind, method) VALUES (1, '2026-10-05', 40.00, 'deposit', 'card'), (2, '2026-11-11', 225.00, 'balance', 'bank transfer');
INSERT INTO seasonal_contracts (guest_id, pitch_id, season_year, season_fee, winter_storage, fully_paid) VALUES (1, 1, 2027, 2150.00, 1, 0);
INSERT INTO waiting_list (guest_id, wanted_from, wanted_to, pitch_type, needs_hookup) VALUES (2, '2027-08-01', '2027-08-08', 'tent', 0);
INSERT INTO facilities (name, location, opens_at, closes_at, out_of_order) VALUES ('shower block', 'Top Field', '06:00', '23:00', 0), ('laundry room', 'reception', '08:00', '20:00', 1), ('chemical disposal point', 'River Meadow', NULL, NULL, 0);
INSERT INTO maintenance_jobs (facility_id, pitch_id, reported_on, problem, urgent) VALUES (2, NULL, '2026-11-28', 'tumble dryer not heating', 0), (NULL, 2, '2026-11-29', 'hook-up bollard tripping', 1);
INSERT INTO equipment_hire (booking_id, item, quantity, hired_on, returned, charge) VALUES (3, 'gas bottle', 1, '2026-11-27', 0, 18.00);
INSERT INTO bread_orders (booking_id, for_morning_of, item, quantity) VALUES (3, '2026-11-30', 'croissant', 4), (3, '2026-11-30', 'sourdough loaf', 1);
INSERT INTO wardens (full_name, mobile, lives_on_site, on_duty, first_aider) VALUES ('Bryn Hughes', '555-0911', 1, 1, 1), ('Sally Pike', '555-0912', 0, 0, 0);
