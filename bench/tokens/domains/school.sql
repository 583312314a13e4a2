-- A secondary school's records, served by the sql plugin as plugin "school" (tools
-- school_school_v1_<table>_<operation>). Part of T1's "services" catalogue.
CREATE TABLE pupils (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, date_of_birth TEXT, year_group INTEGER NOT NULL, form_group TEXT, enrolled_on TEXT, send_support BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE guardians (id INTEGER PRIMARY KEY, pupil_id INTEGER NOT NULL REFERENCES pupils(id), full_name TEXT NOT NULL, relationship TEXT, phone TEXT, email TEXT);
CREATE TABLE staff (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, role TEXT NOT NULL, subject TEXT, email TEXT);
CREATE TABLE courses (id INTEGER PRIMARY KEY, title TEXT NOT NULL, subject TEXT NOT NULL, year_group INTEGER NOT NULL, teacher_id INTEGER REFERENCES staff(id));
CREATE TABLE enrolments (id INTEGER PRIMARY KEY, pupil_id INTEGER NOT NULL REFERENCES pupils(id), course_id INTEGER NOT NULL REFERENCES courses(id), set_level TEXT);
CREATE TABLE timetable_periods (id INTEGER PRIMARY KEY, course_id INTEGER NOT NULL REFERENCES courses(id), weekday INTEGER NOT NULL, period INTEGER NOT NULL, room TEXT);
CREATE TABLE attendance_marks (id INTEGER PRIMARY KEY, pupil_id INTEGER NOT NULL REFERENCES pupils(id), on_date TEXT NOT NULL, session TEXT NOT NULL, mark TEXT NOT NULL);
CREATE TABLE assessments (id INTEGER PRIMARY KEY, course_id INTEGER NOT NULL REFERENCES courses(id), title TEXT NOT NULL, held_on TEXT, max_score INTEGER NOT NULL);
CREATE TABLE grades (id INTEGER PRIMARY KEY, assessment_id INTEGER NOT NULL REFERENCES assessments(id), pupil_id INTEGER NOT NULL REFERENCES pupils(id), score REAL NOT NULL, grade TEXT);
CREATE TABLE homework (id INTEGER PRIMARY KEY, course_id INTEGER NOT NULL REFERENCES courses(id), title TEXT NOT NULL, set_on TEXT NOT NULL, due_on TEXT NOT NULL);
CREATE TABLE behaviour_incidents (id INTEGER PRIMARY KEY, pupil_id INTEGER NOT NULL REFERENCES pupils(id), reported_by INTEGER REFERENCES staff(id), occurred_on TEXT NOT NULL, description TEXT NOT NULL, sanction TEXT);
CREATE TABLE school_trips (id INTEGER PRIMARY KEY, destination TEXT NOT NULL, departs_on TEXT NOT NULL, cost_per_pupil REAL, lead_staff_id INTEGER REFERENCES staff(id), consent_deadline TEXT);

INSERT INTO pupils (full_name, date_of_birth, year_group, form_group, enrolled_on) VALUES ('Oliver Grant', '2012-02-14', 9, '9B', '2023-09-04'), ('Zara Ahmed', '2011-06-30', 10, '10A', '2022-09-05'), ('Leo Fischer', '2013-01-08', 8, '8C', '2024-09-03');
INSERT INTO staff (full_name, role, subject, email) VALUES ('Ms. Helen Price', 'teacher', 'mathematics', 'h.price@school.example'), ('Mr. David Osei', 'teacher', 'history', 'd.osei@school.example'), ('Mrs. Ruth Clarke', 'head of year', NULL, 'r.clarke@school.example');
INSERT INTO courses (title, subject, year_group, teacher_id) VALUES ('Year 9 maths', 'mathematics', 9, 1), ('Year 10 history', 'history', 10, 2);
INSERT INTO homework (course_id, title, set_on, due_on) VALUES (1, 'Simultaneous equations sheet', '2026-11-24', '2026-12-01'), (2, 'Essay: causes of the First World War', '2026-11-20', '2026-12-04');
INSERT INTO attendance_marks (pupil_id, on_date, session, mark) VALUES (1, '2026-11-27', 'AM', 'present'), (2, '2026-11-27', 'AM', 'absent'), (3, '2026-11-27', 'AM', 'late');
