-- A road freight company's records, served by the sql plugin as plugin "freight" (tools
-- freight_freight_v1_<table>_<operation>). Part of T1's "services" catalogue.
CREATE TABLE clients (id INTEGER PRIMARY KEY, company TEXT NOT NULL, contact_email TEXT, billing_address TEXT, credit_limit REAL);
CREATE TABLE consignments (id INTEGER PRIMARY KEY, client_id INTEGER NOT NULL REFERENCES clients(id), origin_depot_id INTEGER, destination_address TEXT NOT NULL, weight_kg REAL NOT NULL, pallets INTEGER, booked_on TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'booked');
CREATE TABLE depots (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, dock_doors INTEGER);
CREATE TABLE vehicles (id INTEGER PRIMARY KEY, registration TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, payload_kg REAL, depot_id INTEGER REFERENCES depots(id), next_service_on TEXT);
CREATE TABLE drivers (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, licence_class TEXT NOT NULL, phone TEXT, depot_id INTEGER REFERENCES depots(id), hours_this_week REAL);
CREATE TABLE routes (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, from_depot_id INTEGER REFERENCES depots(id), to_depot_id INTEGER REFERENCES depots(id), distance_km REAL);
CREATE TABLE trips (id INTEGER PRIMARY KEY, route_id INTEGER REFERENCES routes(id), vehicle_id INTEGER NOT NULL REFERENCES vehicles(id), driver_id INTEGER NOT NULL REFERENCES drivers(id), departs_at TEXT NOT NULL, arrived_at TEXT);
CREATE TABLE trip_stops (id INTEGER PRIMARY KEY, trip_id INTEGER NOT NULL REFERENCES trips(id), consignment_id INTEGER REFERENCES consignments(id), sequence INTEGER NOT NULL, eta TEXT);
CREATE TABLE proof_of_delivery (id INTEGER PRIMARY KEY, consignment_id INTEGER NOT NULL REFERENCES consignments(id), signed_by TEXT NOT NULL, signed_at TEXT NOT NULL, photo_url TEXT);
CREATE TABLE customs_declarations (id INTEGER PRIMARY KEY, consignment_id INTEGER NOT NULL REFERENCES consignments(id), hs_code TEXT NOT NULL, declared_value REAL NOT NULL, country_of_origin TEXT, cleared BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE freight_rates (id INTEGER PRIMARY KEY, route_id INTEGER REFERENCES routes(id), per_kg REAL NOT NULL, per_pallet REAL, valid_from TEXT, valid_to TEXT);
CREATE TABLE fuel_logs (id INTEGER PRIMARY KEY, vehicle_id INTEGER NOT NULL REFERENCES vehicles(id), filled_on TEXT NOT NULL, litres REAL NOT NULL, cost REAL NOT NULL, odometer_km INTEGER);
CREATE TABLE damage_reports (id INTEGER PRIMARY KEY, consignment_id INTEGER NOT NULL REFERENCES consignments(id), reported_on TEXT NOT NULL, description TEXT NOT NULL, claim_amount REAL);

INSERT INTO clients (company, contact_email, billing_address, credit_limit) VALUES ('Acme Garden Supplies', 'ship@acme.example', '1 Mill Lane, Leeds', 20000), ('Blue Harbour Foods', 'logistics@blueharbour.example', '8 Quay St, Hull', 50000);
INSERT INTO depots (name, city, dock_doors) VALUES ('North hub', 'Leeds', 12), ('South hub', 'Reading', 8);
INSERT INTO consignments (client_id, origin_depot_id, destination_address, weight_kg, pallets, booked_on, status) VALUES
  (1, 1, '22 High St, York', 840, 2, '2026-11-25', 'in transit'), (2, 2, 'Unit 4, Dock Rd, Bristol', 3200, 6, '2026-11-26', 'booked'), (1, 1, '5 Park Ave, Durham', 410, 1, '2026-11-20', 'delivered');
INSERT INTO vehicles (registration, kind, payload_kg, depot_id, next_service_on) VALUES ('LK71 ABC', 'rigid 18t', 9000, 1, '2026-12-10'), ('YX70 DEF', 'artic 44t', 29000, 2, '2027-01-15');
INSERT INTO drivers (full_name, licence_class, phone, depot_id, hours_this_week) VALUES ('Gary Holt', 'C', '555-0201', 1, 31.5), ('Priya Shah', 'C+E', '555-0202', 2, 44);
INSERT INTO proof_of_delivery (consignment_id, signed_by, signed_at) VALUES (3, 'J. Rowe', '2026-11-21T11:42:00Z');
