-- A university's admissions office, served by the sql plugin as plugin "admissions" (tools
-- admissions_admissions_v1_<table>_<operation>). Part of T1's "civic" catalogue.
CREATE TABLE programmes (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, title TEXT NOT NULL, faculty TEXT NOT NULL, level TEXT NOT NULL, places INTEGER NOT NULL, typical_offer TEXT);
CREATE TABLE applicants (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, email TEXT NOT NULL, date_of_birth TEXT, nationality TEXT, fee_status TEXT NOT NULL DEFAULT 'home', disability_declared BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE applications (id INTEGER PRIMARY KEY, applicant_id INTEGER NOT NULL REFERENCES applicants(id), programme_id INTEGER NOT NULL REFERENCES programmes(id), entry_year INTEGER NOT NULL, submitted_on TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'submitted', deferred BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE qualifications (id INTEGER PRIMARY KEY, applicant_id INTEGER NOT NULL REFERENCES applicants(id), subject TEXT NOT NULL, level TEXT NOT NULL, grade TEXT, predicted BOOLEAN NOT NULL DEFAULT 0, awarded_on TEXT);
CREATE TABLE referees (id INTEGER PRIMARY KEY, application_id INTEGER NOT NULL REFERENCES applications(id), full_name TEXT NOT NULL, email TEXT NOT NULL, relationship TEXT, reference_received BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE personal_statements (id INTEGER PRIMARY KEY, application_id INTEGER NOT NULL REFERENCES applications(id), body TEXT NOT NULL, word_count INTEGER, similarity_score REAL);
CREATE TABLE interviews (id INTEGER PRIMARY KEY, application_id INTEGER NOT NULL REFERENCES applications(id), interviewer TEXT NOT NULL, scheduled_at TEXT NOT NULL, format TEXT NOT NULL DEFAULT 'online', score INTEGER);
CREATE TABLE offers (id INTEGER PRIMARY KEY, application_id INTEGER NOT NULL REFERENCES applications(id), offer_type TEXT NOT NULL, conditions TEXT, made_on TEXT NOT NULL, reply TEXT, conditions_met BOOLEAN);
CREATE TABLE scholarships (id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount REAL NOT NULL, criteria TEXT, closes_on TEXT NOT NULL);
CREATE TABLE scholarship_applications (id INTEGER PRIMARY KEY, scholarship_id INTEGER NOT NULL REFERENCES scholarships(id), applicant_id INTEGER NOT NULL REFERENCES applicants(id), submitted_on TEXT NOT NULL, outcome TEXT);
CREATE TABLE open_day_bookings (id INTEGER PRIMARY KEY, event_date TEXT NOT NULL, campus TEXT NOT NULL, visitor_name TEXT NOT NULL, email TEXT NOT NULL, guests INTEGER NOT NULL DEFAULT 0, subject_interest TEXT);
CREATE TABLE visa_sponsorships (id INTEGER PRIMARY KEY, applicant_id INTEGER NOT NULL REFERENCES applicants(id), cas_number TEXT, requested_on TEXT NOT NULL, issued_on TEXT, status TEXT NOT NULL DEFAULT 'requested');

INSERT INTO programmes (code, title, faculty, level, places, typical_offer) VALUES ('G400', 'BSc Computer Science', 'Science and Engineering', 'undergraduate', 180, 'AAB'), ('V100', 'BA History', 'Arts and Humanities', 'undergraduate', 90, 'ABB'), ('N1N5', 'MSc Marketing', 'Business School', 'postgraduate', 60, '2:1 degree');
INSERT INTO applicants (full_name, email, date_of_birth, nationality, fee_status) VALUES ('Chloe Bennett', 'chloe@example.com', '2008-03-21', 'GB', 'home'), ('Wei Zhang', 'wei@example.com', '2001-12-02', 'CN', 'international');
INSERT INTO applications (applicant_id, programme_id, entry_year, submitted_on, status) VALUES (1, 1, 2027, '2026-10-14', 'submitted'), (1, 2, 2027, '2026-10-14', 'interview'), (2, 3, 2027, '2026-11-02', 'offer made');
INSERT INTO offers (application_id, offer_type, conditions, made_on, reply) VALUES (3, 'conditional', 'IELTS 6.5 overall', '2026-11-20', NULL);
INSERT INTO interviews (application_id, interviewer, scheduled_at, format) VALUES (2, 'Prof. Helen Carr', '2026-12-08T11:00:00Z', 'online');
INSERT INTO scholarships (name, amount, criteria, closes_on) VALUES ('Vice-Chancellor''s Excellence Award', 3000, 'AAA or above', '2027-03-31');
INSERT INTO open_day_bookings (event_date, campus, visitor_name, email, guests, subject_interest) VALUES ('2027-06-20', 'City', 'Chloe Bennett', 'chloe@example.com', 1, 'computing');
