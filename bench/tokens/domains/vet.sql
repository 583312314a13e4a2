-- A veterinary practice's records, served by the sql plugin as plugin "vet" (tools
-- vet_vet_v1_<table>_<operation>). The animals are the patients and their owners the
-- clients, as practice software has it. Part of T1's "care" catalogue.
CREATE TABLE clients (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, phone TEXT, email TEXT, address TEXT, preferred_contact TEXT);
CREATE TABLE patients (id INTEGER PRIMARY KEY, client_id INTEGER NOT NULL REFERENCES clients(id), name TEXT NOT NULL, species TEXT NOT NULL, breed TEXT, sex TEXT, date_of_birth TEXT, neutered BOOLEAN NOT NULL DEFAULT 0, microchip_number TEXT, deceased BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE veterinarians (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, registration_number TEXT NOT NULL UNIQUE, special_interest TEXT, on_call BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE appointments (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), veterinarian_id INTEGER REFERENCES veterinarians(id), starts_at TEXT NOT NULL, reason TEXT, status TEXT NOT NULL DEFAULT 'booked');
CREATE TABLE vaccinations (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), vaccine TEXT NOT NULL, given_on TEXT NOT NULL, booster_due_on TEXT, batch_number TEXT);
CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), veterinarian_id INTEGER REFERENCES veterinarians(id), drug TEXT NOT NULL, dose TEXT NOT NULL, repeats INTEGER NOT NULL DEFAULT 0, issued_on TEXT NOT NULL);
CREATE TABLE surgeries (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), veterinarian_id INTEGER REFERENCES veterinarians(id), procedure TEXT NOT NULL, scheduled_on TEXT NOT NULL, anaesthetic TEXT, outcome TEXT);
CREATE TABLE lab_results (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), test_name TEXT NOT NULL, sampled_on TEXT NOT NULL, result TEXT, abnormal BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE weight_checks (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), weighed_on TEXT NOT NULL, weight_kg REAL NOT NULL, body_condition_score INTEGER);
CREATE TABLE kennel_stays (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), kennel_number TEXT NOT NULL, checked_in_on TEXT NOT NULL, checked_out_on TEXT, feeding_notes TEXT);
CREATE TABLE invoices (id INTEGER PRIMARY KEY, client_id INTEGER NOT NULL REFERENCES clients(id), issued_on TEXT NOT NULL, total REAL NOT NULL, paid BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE insurance_policies (id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(id), insurer TEXT NOT NULL, policy_number TEXT NOT NULL, excess REAL, renews_on TEXT);

INSERT INTO clients (full_name, phone, email, address, preferred_contact) VALUES ('Maggie Doyle', '555-0401', 'maggie@example.com', '4 Mill Lane', 'sms'), ('Tom Okafor', '555-0402', 'tom@example.com', '19 Harbour Street', 'email');
INSERT INTO patients (client_id, name, species, breed, sex, date_of_birth, neutered, microchip_number) VALUES (1, 'Biscuit', 'dog', 'border terrier', 'male', '2019-04-02', 1, '985112004455667'), (2, 'Luna', 'cat', 'domestic shorthair', 'female', '2022-08-15', 1, '985112009988776'), (2, 'Pip', 'rabbit', 'dwarf lop', 'female', '2024-03-01', 0, NULL);
INSERT INTO veterinarians (full_name, registration_number, special_interest, on_call) VALUES ('Dr. Anika Rao', 'RCVS-7712', 'orthopaedics', 1), ('Dr. Owen Price', 'RCVS-8120', 'exotics', 0);
INSERT INTO appointments (patient_id, veterinarian_id, starts_at, reason, status) VALUES (1, 1, '2026-12-01T09:30:00Z', 'limping on the front leg', 'booked'), (3, 2, '2026-12-01T11:00:00Z', 'nail trim', 'booked');
INSERT INTO vaccinations (patient_id, vaccine, given_on, booster_due_on, batch_number) VALUES (1, 'DHP + lepto', '2025-12-10', '2026-12-10', 'B2291'), (2, 'feline flu + enteritis', '2026-02-03', '2027-02-03', 'F1180');
INSERT INTO weight_checks (patient_id, weighed_on, weight_kg, body_condition_score) VALUES (1, '2026-11-02', 8.4, 6), (2, '2026-10-20', 4.1, 5);
INSERT INTO kennel_stays (patient_id, kennel_number, checked_in_on, feeding_notes) VALUES (1, 'K3', '2026-11-27', 'half a cup twice a day');
