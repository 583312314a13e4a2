-- A hotel's property management records, served by the sql plugin as plugin "hotel" (tools
-- hotel_hotel_v1_<table>_<operation>). Part of T1's "trades" catalogue.
CREATE TABLE guests (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, email TEXT, phone TEXT, nationality TEXT, loyalty_tier TEXT);
CREATE TABLE rooms (id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, floor INTEGER NOT NULL, room_type TEXT NOT NULL, beds INTEGER NOT NULL, sea_view BOOLEAN NOT NULL DEFAULT 0, out_of_order BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE reservations (id INTEGER PRIMARY KEY, guest_id INTEGER NOT NULL REFERENCES guests(id), room_id INTEGER REFERENCES rooms(id), arrival_on TEXT NOT NULL, departure_on TEXT NOT NULL, adults INTEGER NOT NULL DEFAULT 1, rate_plan_id INTEGER, status TEXT NOT NULL DEFAULT 'confirmed');
CREATE TABLE rate_plans (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, name TEXT NOT NULL, nightly_rate REAL NOT NULL, breakfast_included BOOLEAN NOT NULL DEFAULT 0, refundable BOOLEAN NOT NULL DEFAULT 1);
CREATE TABLE folios (id INTEGER PRIMARY KEY, reservation_id INTEGER NOT NULL REFERENCES reservations(id), opened_on TEXT NOT NULL, balance REAL NOT NULL DEFAULT 0, settled BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE folio_charges (id INTEGER PRIMARY KEY, folio_id INTEGER NOT NULL REFERENCES folios(id), posted_at TEXT NOT NULL, department TEXT NOT NULL, description TEXT, amount REAL NOT NULL);
CREATE TABLE housekeeping_tasks (id INTEGER PRIMARY KEY, room_id INTEGER NOT NULL REFERENCES rooms(id), task_date TEXT NOT NULL, kind TEXT NOT NULL, attendant TEXT, done BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE maintenance_tickets (id INTEGER PRIMARY KEY, room_id INTEGER REFERENCES rooms(id), reported_at TEXT NOT NULL, issue TEXT NOT NULL, priority TEXT NOT NULL DEFAULT 'normal', resolved BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE lost_and_found (id INTEGER PRIMARY KEY, found_on TEXT NOT NULL, location TEXT, item_description TEXT NOT NULL, claimed_by_guest_id INTEGER REFERENCES guests(id));
CREATE TABLE spa_bookings (id INTEGER PRIMARY KEY, guest_id INTEGER NOT NULL REFERENCES guests(id), treatment TEXT NOT NULL, starts_at TEXT NOT NULL, therapist TEXT);
CREATE TABLE restaurant_covers (id INTEGER PRIMARY KEY, guest_id INTEGER REFERENCES guests(id), party_size INTEGER NOT NULL, seated_at TEXT NOT NULL, table_number TEXT);
CREATE TABLE guest_reviews (id INTEGER PRIMARY KEY, guest_id INTEGER REFERENCES guests(id), stayed_on TEXT, rating INTEGER NOT NULL, comment TEXT, source TEXT);

INSERT INTO guests (full_name, email, phone, nationality, loyalty_tier) VALUES ('Hannah Schmidt', 'hannah@example.com', '555-0301', 'DE', 'gold'), ('Carlos Ruiz', 'carlos@example.com', '555-0302', 'ES', NULL);
INSERT INTO rooms (number, floor, room_type, beds, sea_view) VALUES ('101', 1, 'double', 1, 0), ('204', 2, 'twin', 2, 1), ('310', 3, 'suite', 1, 1);
INSERT INTO rate_plans (code, name, nightly_rate, breakfast_included, refundable) VALUES ('BAR', 'Best available rate', 140, 0, 1), ('BB', 'Bed and breakfast', 165, 1, 1);
INSERT INTO reservations (guest_id, room_id, arrival_on, departure_on, adults, rate_plan_id, status) VALUES (1, 3, '2026-12-02', '2026-12-05', 2, 2, 'confirmed'), (2, 2, '2026-11-28', '2026-11-30', 1, 1, 'in house');
INSERT INTO maintenance_tickets (room_id, reported_at, issue, priority) VALUES (1, '2026-11-27T08:00:00Z', 'shower drains slowly', 'normal');
