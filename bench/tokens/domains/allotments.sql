-- An allotment society's records, served by the sql plugin as plugin "allotments" (tools
-- allotments_allotments_v1_<table>_<operation>). Plots are measured in rods and let to
-- members by the year; the committee inspects cultivation and sends non-cultivation
-- notices; the trading hut sells seed potatoes, compost and canes to members. Part of
-- T1's "homes" catalogue.
CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, phone TEXT, email TEXT, address TEXT, joined_on TEXT NOT NULL, committee_role TEXT, key_number TEXT);
CREATE TABLE plots (id INTEGER PRIMARY KEY, plot_number TEXT NOT NULL UNIQUE, site TEXT NOT NULL, size_rods REAL NOT NULL, has_shed BOOLEAN NOT NULL DEFAULT 0, has_greenhouse BOOLEAN NOT NULL DEFAULT 0, nearest_water_trough TEXT, vacant BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE plot_lettings (id INTEGER PRIMARY KEY, plot_id INTEGER NOT NULL REFERENCES plots(id), member_id INTEGER NOT NULL REFERENCES members(id), started_on TEXT NOT NULL, ended_on TEXT, half_plot BOOLEAN NOT NULL DEFAULT 0, co_worker TEXT);
CREATE TABLE waiting_list (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, phone TEXT, email TEXT, added_on TEXT NOT NULL, preferred_site TEXT, half_plot_ok BOOLEAN NOT NULL DEFAULT 1, offered_on TEXT);
CREATE TABLE plot_rents (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id), plot_id INTEGER NOT NULL REFERENCES plots(id), rent_year INTEGER NOT NULL, amount REAL NOT NULL, water_charge REAL NOT NULL DEFAULT 0, paid_on TEXT, concession BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE inspections (id INTEGER PRIMARY KEY, plot_id INTEGER NOT NULL REFERENCES plots(id), inspected_on TEXT NOT NULL, inspector TEXT NOT NULL, cultivated_percent INTEGER NOT NULL, grade TEXT NOT NULL, remarks TEXT);
CREATE TABLE non_cultivation_notices (id INTEGER PRIMARY KEY, plot_id INTEGER NOT NULL REFERENCES plots(id), member_id INTEGER NOT NULL REFERENCES members(id), stage TEXT NOT NULL, sent_on TEXT NOT NULL, comply_by TEXT NOT NULL, complied BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE trading_hut_stock (id INTEGER PRIMARY KEY, item TEXT NOT NULL, unit TEXT NOT NULL, member_price REAL NOT NULL, quantity_in_stock INTEGER NOT NULL DEFAULT 0, reorder_level INTEGER);
CREATE TABLE trading_hut_sales (id INTEGER PRIMARY KEY, member_id INTEGER REFERENCES members(id), stock_item_id INTEGER NOT NULL REFERENCES trading_hut_stock(id), quantity INTEGER NOT NULL, sold_on TEXT NOT NULL, total REAL NOT NULL);
CREATE TABLE tool_loans (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id), tool TEXT NOT NULL, lent_on TEXT NOT NULL, due_back_on TEXT NOT NULL, returned_on TEXT);
CREATE TABLE work_parties (id INTEGER PRIMARY KEY, held_on TEXT NOT NULL, starts_at TEXT NOT NULL, meeting_point TEXT, task TEXT NOT NULL, volunteers_needed INTEGER);
CREATE TABLE show_entries (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id), show_year INTEGER NOT NULL, show_class TEXT NOT NULL, exhibit TEXT NOT NULL, placing TEXT);

INSERT INTO members (full_name, phone, email, address, joined_on, committee_role, key_number) VALUES ('Alan Fairbrother', '555-1201', 'alan@example.com', '3 Hawthorn Close', '2009-03-01', 'chair', 'K-017'), ('Joyce Adeyemi', '555-1202', 'joyce@example.com', '61 Station Road', '2021-04-15', NULL, 'K-102'), ('Stan Kowalczyk', '555-1203', NULL, '14 Mill Terrace', '2016-02-20', 'trading hut manager', 'K-064');
INSERT INTO plots (plot_number, site, size_rods, has_shed, has_greenhouse, nearest_water_trough, vacant) VALUES ('12A', 'Brook Lane', 5, 1, 0, 'T2', 0), ('12B', 'Brook Lane', 5, 0, 0, 'T2', 1), ('31', 'Brook Lane', 10, 1, 1, 'T4', 0), ('4', 'Church Field', 10, 0, 0, 'T1', 0);
INSERT INTO plot_lettings (plot_id, member_id, started_on, half_plot, co_worker) VALUES (1, 2, '2021-04-15', 1, NULL), (3, 1, '2009-03-01', 0, 'Margaret Fairbrother'), (4, 3, '2016-02-20', 0, NULL);
INSERT INTO waiting_list (full_name, phone, email, added_on, preferred_site, half_plot_ok) VALUES ('Harriet Cole', '555-1211', 'harriet@example.com', '2025-09-03', 'Brook Lane', 1), ('Imran Qureshi', '555-1212', NULL, '2026-01-19', 'Church Field', 0);
INSERT INTO plot_rents (member_id, plot_id, rent_year, amount, water_charge, paid_on, concession) VALUES (2, 1, 2026, 32.50, 6.00, '2026-01-08', 0), (1, 3, 2026, 65.00, 12.00, '2026-01-02', 1), (3, 4, 2026, 65.00, 12.00, NULL, 0);
INSERT INTO inspections (plot_id, inspected_on, inspector, cultivated_percent, grade, remarks) VALUES (4, '2026-07-12', 'Alan Fairbrother', 30, 'poor', 'brambles and couch grass over the back half'), (1, '2026-07-12', 'Alan Fairbrother', 90, 'good', NULL);
INSERT INTO non_cultivation_notices (plot_id, member_id, stage, sent_on, comply_by) VALUES (4, 3, 'first letter', '2026-07-20', '2026-08-31');
INSERT INTO trading_hut_stock (item, unit, member_price, quantity_in_stock, reorder_level) VALUES ('seed potatoes, Charlotte', '2 kg bag', 3.20, 14, 10), ('peat-free compost', '50 litre bag', 5.50, 4, 10), ('bamboo canes, 8 ft', 'bundle of 10', 4.00, 20, 5);
INSERT INTO tool_loans (member_id, tool, lent_on, due_back_on) VALUES (2, 'rotavator', '2026-11-26', '2026-12-03');
INSERT INTO work_parties (held_on, starts_at, meeting_point, task, volunteers_needed) VALUES ('2026-12-06', '10:00', 'trading hut', 'clear the brook-side hedge and chip the cuttings', 8);
INSERT INTO show_entries (member_id, show_year, show_class, exhibit, placing) VALUES (1, 2026, 'heaviest marrow', '14.2 kg marrow', 'first'), (2, 2026, 'five runner beans', 'Scarlet Emperor', 'highly commended');
