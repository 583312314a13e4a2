-- A council-run leisure centre (gym, studios, courts, pool), served by the sql plugin as
-- plugin "leisure" (tools leisure_leisure_v1_<table>_<operation>). Part of T1's "care"
-- catalogue.
CREATE TABLE membership_plans (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, monthly_fee REAL NOT NULL, joining_fee REAL NOT NULL DEFAULT 0, off_peak_only BOOLEAN NOT NULL DEFAULT 0, includes_swimming BOOLEAN NOT NULL DEFAULT 1);
CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, email TEXT, phone TEXT, date_of_birth TEXT, membership_plan_id INTEGER REFERENCES membership_plans(id), joined_on TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'active');
CREATE TABLE instructors (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, qualification TEXT, specialism TEXT, hourly_rate REAL);
CREATE TABLE fitness_classes (id INTEGER PRIMARY KEY, activity TEXT NOT NULL, instructor_id INTEGER REFERENCES instructors(id), studio TEXT NOT NULL, starts_at TEXT NOT NULL, duration_minutes INTEGER NOT NULL, capacity INTEGER NOT NULL);
CREATE TABLE class_bookings (id INTEGER PRIMARY KEY, fitness_class_id INTEGER NOT NULL REFERENCES fitness_classes(id), member_id INTEGER NOT NULL REFERENCES members(id), booked_at TEXT NOT NULL, waitlisted BOOLEAN NOT NULL DEFAULT 0, attended BOOLEAN);
CREATE TABLE court_bookings (id INTEGER PRIMARY KEY, sport TEXT NOT NULL, court TEXT NOT NULL, member_id INTEGER REFERENCES members(id), starts_at TEXT NOT NULL, duration_minutes INTEGER NOT NULL DEFAULT 60);
CREATE TABLE pool_sessions (id INTEGER PRIMARY KEY, session_type TEXT NOT NULL, pool TEXT NOT NULL, starts_at TEXT NOT NULL, lanes_open INTEGER, lifeguards INTEGER NOT NULL DEFAULT 2);
CREATE TABLE personal_training_sessions (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id), instructor_id INTEGER NOT NULL REFERENCES instructors(id), session_at TEXT NOT NULL, goal TEXT);
CREATE TABLE lockers (id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, changing_room TEXT NOT NULL, member_id INTEGER REFERENCES members(id), rented_until TEXT);
CREATE TABLE membership_payments (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id), collected_on TEXT NOT NULL, amount REAL NOT NULL, method TEXT NOT NULL DEFAULT 'direct debit', status TEXT NOT NULL DEFAULT 'collected');
CREATE TABLE check_ins (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id), checked_in_at TEXT NOT NULL, entrance TEXT);
CREATE TABLE equipment_faults (id INTEGER PRIMARY KEY, machine TEXT NOT NULL, area TEXT, reported_on TEXT NOT NULL, description TEXT NOT NULL, out_of_service BOOLEAN NOT NULL DEFAULT 1, fixed_on TEXT);

INSERT INTO membership_plans (name, monthly_fee, joining_fee, off_peak_only, includes_swimming) VALUES ('Anytime', 39.0, 20.0, 0, 1), ('Off-peak', 24.0, 0, 1, 1), ('Swim only', 18.0, 0, 0, 1);
INSERT INTO members (full_name, email, phone, date_of_birth, membership_plan_id, joined_on, status) VALUES ('Tom Baker', 'tom.b@example.com', '555-0501', '1988-06-12', 1, '2024-01-09', 'active'), ('Priya Shah', 'priya@example.com', '555-0502', '1995-11-30', 2, '2025-09-01', 'frozen');
INSERT INTO instructors (full_name, qualification, specialism, hourly_rate) VALUES ('Jess Morgan', 'Level 3 PT', 'strength', 30), ('Leo Grant', 'Level 2 exercise to music', 'spin', 22);
INSERT INTO fitness_classes (activity, instructor_id, studio, starts_at, duration_minutes, capacity) VALUES ('spin', 2, 'Studio 2', '2026-12-01T18:00:00Z', 45, 20), ('yoga', 1, 'Studio 1', '2026-12-02T07:00:00Z', 60, 16);
INSERT INTO class_bookings (fitness_class_id, member_id, booked_at) VALUES (1, 1, '2026-11-28T10:00:00Z');
INSERT INTO pool_sessions (session_type, pool, starts_at, lanes_open) VALUES ('lane swim', 'main', '2026-12-01T06:30:00Z', 6), ('aqua aerobics', 'learner', '2026-12-01T10:00:00Z', NULL);
INSERT INTO equipment_faults (machine, area, reported_on, description) VALUES ('treadmill 4', 'gym floor', '2026-11-26', 'belt slips at speed');
INSERT INTO lockers (number, changing_room, member_id, rented_until) VALUES ('M12', 'male', 1, '2027-01-31'), ('F07', 'female', NULL, NULL);
