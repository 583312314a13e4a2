-- A removals firm's records, served by the sql plugin as plugin "removals" (tools
-- removals_removals_v1_<table>_<operation>). A surveyor visits to estimate the load in
-- cubic feet, a quote follows, and an accepted quote becomes a removal job worked by a
-- crew of porters; goods can go into containerised storage. Part of T1's "homes"
-- catalogue.
CREATE TABLE customers (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, phone TEXT, email TEXT, moving_from TEXT NOT NULL, moving_to TEXT, how_heard TEXT);
CREATE TABLE surveys (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), survey_type TEXT NOT NULL, surveyed_at TEXT NOT NULL, surveyor TEXT NOT NULL, estimated_volume_cu_ft INTEGER, access_notes TEXT);
CREATE TABLE quotes (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), survey_id INTEGER REFERENCES surveys(id), quoted_on TEXT NOT NULL, price REAL NOT NULL, packing_service BOOLEAN NOT NULL DEFAULT 0, valid_until TEXT NOT NULL, accepted BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE vehicles (id INTEGER PRIMARY KEY, registration TEXT NOT NULL UNIQUE, vehicle_type TEXT NOT NULL, capacity_cu_ft INTEGER NOT NULL, tail_lift BOOLEAN NOT NULL DEFAULT 0, mot_due_on TEXT, off_road BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE porters (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, mobile TEXT, licence_category TEXT, team_leader BOOLEAN NOT NULL DEFAULT 0, day_rate REAL NOT NULL, available BOOLEAN NOT NULL DEFAULT 1);
CREATE TABLE removal_jobs (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), quote_id INTEGER REFERENCES quotes(id), move_date TEXT NOT NULL, vehicle_id INTEGER REFERENCES vehicles(id), crew_size INTEGER NOT NULL DEFAULT 2, keys_released_at TEXT, status TEXT NOT NULL DEFAULT 'booked');
CREATE TABLE job_crew (id INTEGER PRIMARY KEY, removal_job_id INTEGER NOT NULL REFERENCES removal_jobs(id), porter_id INTEGER NOT NULL REFERENCES porters(id), role TEXT NOT NULL, hours_worked REAL);
CREATE TABLE inventory_items (id INTEGER PRIMARY KEY, removal_job_id INTEGER NOT NULL REFERENCES removal_jobs(id), room TEXT NOT NULL, item TEXT NOT NULL, quantity INTEGER NOT NULL DEFAULT 1, fragile BOOLEAN NOT NULL DEFAULT 0, needs_dismantling BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE packing_material_orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), material TEXT NOT NULL, quantity INTEGER NOT NULL, deliver_on TEXT, delivered BOOLEAN NOT NULL DEFAULT 0, price REAL NOT NULL);
CREATE TABLE storage_containers (id INTEGER PRIMARY KEY, container_number TEXT NOT NULL UNIQUE, customer_id INTEGER REFERENCES customers(id), capacity_cu_ft INTEGER NOT NULL, warehouse_bay TEXT, weekly_rate REAL NOT NULL, in_since TEXT, out_on TEXT);
CREATE TABLE damage_claims (id INTEGER PRIMARY KEY, removal_job_id INTEGER NOT NULL REFERENCES removal_jobs(id), reported_on TEXT NOT NULL, item TEXT NOT NULL, damage TEXT NOT NULL, amount_claimed REAL, status TEXT NOT NULL DEFAULT 'open');
CREATE TABLE payments (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), removal_job_id INTEGER REFERENCES removal_jobs(id), paid_on TEXT NOT NULL, amount REAL NOT NULL, kind TEXT NOT NULL, method TEXT NOT NULL);

INSERT INTO customers (full_name, phone, email, moving_from, moving_to, how_heard) VALUES ('Bernard and Joan Asher', '555-1101', 'ashers@example.com', '22 Beech Road, Altrincham', '5 Quay Cottages, Whitby', 'Google'), ('Rosa Delgado', '555-1102', 'rosa@example.com', 'Flat 8, 30 Oxford Street, Manchester', NULL, 'recommended');
INSERT INTO surveys (customer_id, survey_type, surveyed_at, surveyor, estimated_volume_cu_ft, access_notes) VALUES (1, 'home visit', '2026-11-12T10:00:00Z', 'Keith', 1450, 'narrow lane at Whitby end, no parking for a 7.5 tonne lorry'), (2, 'video', '2026-11-24T16:00:00Z', 'Keith', 380, 'third floor, lift is small');
INSERT INTO quotes (customer_id, survey_id, quoted_on, price, packing_service, valid_until, accepted) VALUES (1, 1, '2026-11-14', 2380.00, 1, '2026-12-14', 1), (2, 2, '2026-11-25', 640.00, 0, '2026-12-25', 0);
INSERT INTO vehicles (registration, vehicle_type, capacity_cu_ft, tail_lift, mot_due_on, off_road) VALUES ('YK21 MVE', '7.5 tonne lorry', 1400, 1, '2027-04-30', 0), ('YK19 LUT', 'Luton van', 600, 1, '2026-12-12', 0);
INSERT INTO porters (full_name, mobile, licence_category, team_leader, day_rate, available) VALUES ('Darren Cole', '555-1111', 'C1', 1, 165.00, 1), ('Liam Walsh', '555-1112', 'B', 0, 120.00, 1), ('Tomasz Nowak', '555-1113', 'C1', 0, 130.00, 0);
INSERT INTO removal_jobs (customer_id, quote_id, move_date, vehicle_id, crew_size, status) VALUES (1, 1, '2026-12-09', 1, 3, 'booked');
INSERT INTO job_crew (removal_job_id, porter_id, role) VALUES (1, 1, 'driver and team leader'), (1, 2, 'porter');
INSERT INTO inventory_items (removal_job_id, room, item, quantity, fragile, needs_dismantling) VALUES (1, 'lounge', 'upright piano', 1, 1, 0), (1, 'main bedroom', 'king size bed', 1, 0, 1), (1, 'kitchen', 'boxes of crockery', 6, 1, 0);
INSERT INTO packing_material_orders (customer_id, material, quantity, deliver_on, delivered, price) VALUES (1, 'double-wall boxes', 40, '2026-12-01', 0, 88.00), (1, 'wardrobe cartons', 4, '2026-12-01', 0, 36.00);
INSERT INTO storage_containers (container_number, customer_id, capacity_cu_ft, warehouse_bay, weekly_rate, in_since) VALUES ('SC-014', 2, 250, 'Bay C', 22.00, '2026-11-01'), ('SC-015', NULL, 250, 'Bay C', 22.00, NULL);
INSERT INTO payments (customer_id, removal_job_id, paid_on, amount, kind, method) VALUES (1, 1, '2026-11-16', 250.00, 'deposit', 'card');
