-- A public library's records, served by the sql plugin as plugin "library" (tools
-- library_library_v1_<table>_<operation>). Part of T1's "services" catalogue.
CREATE TABLE patrons (id INTEGER PRIMARY KEY, card_number TEXT NOT NULL UNIQUE, full_name TEXT NOT NULL, email TEXT, home_branch_id INTEGER, joined_on TEXT, blocked BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE branches (id INTEGER PRIMARY KEY, name TEXT NOT NULL, address TEXT, opening_hours TEXT);
CREATE TABLE titles (id INTEGER PRIMARY KEY, isbn TEXT UNIQUE, title TEXT NOT NULL, author TEXT NOT NULL, publisher TEXT, published_year INTEGER, subject TEXT);
CREATE TABLE items (id INTEGER PRIMARY KEY, title_id INTEGER NOT NULL REFERENCES titles(id), barcode TEXT NOT NULL UNIQUE, branch_id INTEGER NOT NULL REFERENCES branches(id), shelf_mark TEXT, condition TEXT);
CREATE TABLE loans (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES items(id), patron_id INTEGER NOT NULL REFERENCES patrons(id), checked_out_on TEXT NOT NULL, due_on TEXT NOT NULL, returned_on TEXT, renewals INTEGER NOT NULL DEFAULT 0);
CREATE TABLE holds (id INTEGER PRIMARY KEY, title_id INTEGER NOT NULL REFERENCES titles(id), patron_id INTEGER NOT NULL REFERENCES patrons(id), placed_on TEXT NOT NULL, pickup_branch_id INTEGER REFERENCES branches(id), status TEXT NOT NULL DEFAULT 'waiting');
CREATE TABLE fines (id INTEGER PRIMARY KEY, patron_id INTEGER NOT NULL REFERENCES patrons(id), loan_id INTEGER REFERENCES loans(id), amount REAL NOT NULL, reason TEXT, paid BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE events (id INTEGER PRIMARY KEY, branch_id INTEGER REFERENCES branches(id), name TEXT NOT NULL, starts_at TEXT NOT NULL, audience TEXT, capacity INTEGER);
CREATE TABLE event_bookings (id INTEGER PRIMARY KEY, event_id INTEGER NOT NULL REFERENCES events(id), patron_id INTEGER NOT NULL REFERENCES patrons(id), seats INTEGER NOT NULL DEFAULT 1);
CREATE TABLE acquisitions (id INTEGER PRIMARY KEY, title_id INTEGER REFERENCES titles(id), vendor TEXT NOT NULL, ordered_on TEXT NOT NULL, copies INTEGER NOT NULL, cost REAL);
CREATE TABLE interlibrary_requests (id INTEGER PRIMARY KEY, patron_id INTEGER NOT NULL REFERENCES patrons(id), requested_title TEXT NOT NULL, lending_library TEXT, requested_on TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'requested');
CREATE TABLE computer_sessions (id INTEGER PRIMARY KEY, patron_id INTEGER NOT NULL REFERENCES patrons(id), branch_id INTEGER NOT NULL REFERENCES branches(id), terminal TEXT NOT NULL, started_at TEXT NOT NULL, minutes INTEGER);

INSERT INTO branches (name, address, opening_hours) VALUES ('Central', '1 Library Sq', 'Mon-Sat 9-20'), ('Riverside', '40 Quay Rd', 'Tue-Sat 10-17');
INSERT INTO patrons (card_number, full_name, email, home_branch_id, joined_on) VALUES ('C0001', 'Nora Vance', 'nora@example.com', 1, '2020-03-01'), ('C0002', 'Ravi Patel', 'ravi@example.com', 2, '2024-06-11');
INSERT INTO titles (isbn, title, author, publisher, published_year, subject) VALUES ('9780141439518', 'Pride and Prejudice', 'Jane Austen', 'Penguin', 1813, 'fiction'), ('9780262033848', 'Introduction to Algorithms', 'Cormen et al.', 'MIT Press', 2009, 'computing'), ('9780099590088', 'Sapiens', 'Yuval Noah Harari', 'Vintage', 2014, 'history');
INSERT INTO items (title_id, barcode, branch_id, shelf_mark, condition) VALUES (1, 'B100001', 1, 'F AUS', 'good'), (1, 'B100002', 2, 'F AUS', 'worn'), (2, 'B100003', 1, '005.1 COR', 'good'), (3, 'B100004', 1, '909 HAR', 'good');
INSERT INTO loans (item_id, patron_id, checked_out_on, due_on, returned_on) VALUES (1, 1, '2026-11-01', '2026-11-22', NULL), (3, 2, '2026-11-20', '2026-12-11', NULL), (4, 1, '2026-10-01', '2026-10-22', '2026-10-20');
INSERT INTO fines (patron_id, loan_id, amount, reason, paid) VALUES (1, 1, 1.40, 'overdue', 0);
