-- A family clinic's records, served by the sql plugin as plugin "clinic" (tools
-- clinic_clinic_v1_<table>_<operation>). Part of T1's "services" catalogue: a domain the
-- search ranker was never tuned on. Few rows: the loop reads a handful of them.
CREATE TABLE patients (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, date_of_birth TEXT NOT NULL, sex TEXT, phone TEXT, email TEXT, nhs_number TEXT UNIQUE, registered_on TEXT);
CREATE TABLE practitioners (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, specialty TEXT NOT NULL, licence_number TEXT UNIQUE, room TEXT, accepting_patients BOOLEAN NOT NULL DEFAULT 1);
CREATE TABLE appointments (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), practitioner_id INTEGER NOT NULL REFERENCES practitioners(id), starts_at TEXT NOT NULL, duration_minutes INTEGER NOT NULL DEFAULT 15, reason TEXT, status TEXT NOT NULL DEFAULT 'booked');
CREATE TABLE encounters (id INTEGER PRIMARY KEY, appointment_id INTEGER REFERENCES appointments(id), patient_id INTEGER NOT NULL REFERENCES patients(id), practitioner_id INTEGER NOT NULL REFERENCES practitioners(id), seen_at TEXT NOT NULL, notes TEXT);
CREATE TABLE diagnoses (id INTEGER PRIMARY KEY, encounter_id INTEGER NOT NULL REFERENCES encounters(id), icd10_code TEXT NOT NULL, description TEXT NOT NULL, chronic BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), practitioner_id INTEGER NOT NULL REFERENCES practitioners(id), medication_id INTEGER NOT NULL, dosage TEXT NOT NULL, issued_on TEXT NOT NULL, repeats INTEGER NOT NULL DEFAULT 0);
CREATE TABLE medications (id INTEGER PRIMARY KEY, generic_name TEXT NOT NULL, brand_name TEXT, form TEXT, strength TEXT, controlled BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE allergies (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), substance TEXT NOT NULL, reaction TEXT, severity TEXT);
CREATE TABLE immunizations (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), vaccine TEXT NOT NULL, given_on TEXT NOT NULL, lot_number TEXT, next_due_on TEXT);
CREATE TABLE lab_orders (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), practitioner_id INTEGER NOT NULL REFERENCES practitioners(id), test_panel TEXT NOT NULL, ordered_on TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'ordered');
CREATE TABLE lab_results (id INTEGER PRIMARY KEY, lab_order_id INTEGER NOT NULL REFERENCES lab_orders(id), analyte TEXT NOT NULL, value REAL, unit TEXT, reference_range TEXT, abnormal BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE referrals (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), from_practitioner_id INTEGER REFERENCES practitioners(id), to_service TEXT NOT NULL, urgency TEXT NOT NULL DEFAULT 'routine', sent_on TEXT);
CREATE TABLE insurance_claims (id INTEGER PRIMARY KEY, encounter_id INTEGER NOT NULL REFERENCES encounters(id), payer TEXT NOT NULL, amount REAL NOT NULL, submitted_on TEXT, status TEXT NOT NULL DEFAULT 'submitted');

INSERT INTO patients (full_name, date_of_birth, sex, phone, email, nhs_number, registered_on) VALUES
  ('Maria Lopez', '1984-03-12', 'F', '555-0101', 'maria@example.com', '943 476 5919', '2019-05-02'),
  ('Tom Becker', '1951-11-30', 'M', '555-0102', NULL, '943 476 5920', '2015-01-20'),
  ('Aisha Khan', '2017-07-04', 'F', '555-0103', 'khan.family@example.com', '943 476 5921', '2017-07-20');
INSERT INTO practitioners (full_name, specialty, licence_number, room) VALUES
  ('Dr. Ines Duarte', 'general practice', 'GMC-100201', '1'), ('Dr. Sam Oyelaran', 'paediatrics', 'GMC-100877', '2'), ('Nurse Lee Park', 'practice nursing', 'NMC-55102', '3');
INSERT INTO appointments (patient_id, practitioner_id, starts_at, duration_minutes, reason, status) VALUES
  (1, 1, '2026-12-01T09:00:00Z', 15, 'persistent cough', 'booked'), (3, 2, '2026-12-01T10:30:00Z', 20, 'fever', 'booked'), (2, 3, '2026-11-20T14:00:00Z', 10, 'blood pressure check', 'attended');
INSERT INTO medications (generic_name, brand_name, form, strength) VALUES ('amoxicillin', 'Amoxil', 'capsule', '500 mg'), ('amlodipine', 'Norvasc', 'tablet', '5 mg'), ('paracetamol', 'Calpol', 'suspension', '120 mg/5 ml');
INSERT INTO prescriptions (patient_id, practitioner_id, medication_id, dosage, issued_on, repeats) VALUES (2, 1, 2, 'one tablet daily', '2026-11-20', 5), (3, 2, 3, '5 ml every 6 hours', '2026-11-21', 0);
INSERT INTO allergies (patient_id, substance, reaction, severity) VALUES (1, 'penicillin', 'rash', 'moderate'), (2, 'peanuts', 'anaphylaxis', 'severe');
INSERT INTO immunizations (patient_id, vaccine, given_on, next_due_on) VALUES (3, 'MMR', '2018-08-01', '2020-08-01'), (2, 'influenza', '2026-10-05', '2027-10-05');
