-- A dental surgery's records, served by the sql plugin as plugin "dental" (tools
-- dental_dental_v1_<table>_<operation>). Part of T1's "care" catalogue.
CREATE TABLE patients (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, date_of_birth TEXT NOT NULL, phone TEXT, email TEXT, exempt_from_charges BOOLEAN NOT NULL DEFAULT 0, registered_on TEXT);
CREATE TABLE clinicians (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, role TEXT NOT NULL, registration_number TEXT NOT NULL UNIQUE, surgery_room TEXT);
CREATE TABLE appointments (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), clinician_id INTEGER NOT NULL REFERENCES clinicians(id), starts_at TEXT NOT NULL, appointment_type TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'booked');
CREATE TABLE medical_histories (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), updated_on TEXT NOT NULL, medications TEXT, allergies TEXT, smoker BOOLEAN, pregnant BOOLEAN);
CREATE TABLE treatment_plans (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), clinician_id INTEGER REFERENCES clinicians(id), drawn_up_on TEXT NOT NULL, estimate REAL NOT NULL, accepted BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE procedures (id INTEGER PRIMARY KEY, treatment_plan_id INTEGER NOT NULL REFERENCES treatment_plans(id), tooth TEXT, description TEXT NOT NULL, fee REAL NOT NULL, completed_on TEXT);
CREATE TABLE radiographs (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), taken_on TEXT NOT NULL, image_type TEXT NOT NULL, tooth TEXT, findings TEXT);
CREATE TABLE perio_charts (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), recorded_on TEXT NOT NULL, deepest_pocket_mm INTEGER, bleeding_sites INTEGER, plaque_score REAL);
CREATE TABLE recalls (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), due_on TEXT NOT NULL, interval_months INTEGER NOT NULL DEFAULT 6, reminder_sent BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE lab_orders (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), laboratory TEXT NOT NULL, item TEXT NOT NULL, shade TEXT, sent_on TEXT NOT NULL, due_back_on TEXT, received BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE payments (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), paid_on TEXT NOT NULL, amount REAL NOT NULL, method TEXT NOT NULL);
CREATE TABLE cancellation_list (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), added_on TEXT NOT NULL, preferred_times TEXT, short_notice_ok BOOLEAN NOT NULL DEFAULT 1);

INSERT INTO patients (full_name, date_of_birth, phone, email, exempt_from_charges, registered_on) VALUES ('Grace Holloway', '1979-02-14', '555-0601', 'grace@example.com', 0, '2015-05-20'), ('Sam Whitfield', '2011-09-03', '555-0602', NULL, 1, '2018-01-11');
INSERT INTO clinicians (full_name, role, registration_number, surgery_room) VALUES ('Dr. Nadia Petrova', 'dentist', 'GDC-55120', 'Surgery 1'), ('Chris Allen', 'hygienist', 'GDC-70433', 'Surgery 3');
INSERT INTO appointments (patient_id, clinician_id, starts_at, appointment_type, status) VALUES (1, 1, '2026-12-03T14:20:00Z', 'check-up', 'booked'), (2, 2, '2026-12-03T15:00:00Z', 'scale and polish', 'booked');
INSERT INTO recalls (patient_id, due_on, interval_months, reminder_sent) VALUES (1, '2026-12-15', 6, 0), (2, '2027-01-10', 12, 0);
INSERT INTO lab_orders (patient_id, laboratory, item, shade, sent_on, due_back_on) VALUES (1, 'Bright Smile Lab', 'crown UR6', 'A2', '2026-11-20', '2026-12-01');
INSERT INTO medical_histories (patient_id, updated_on, medications, allergies, smoker) VALUES (1, '2026-06-01', 'warfarin', 'penicillin', 0);
