-- The wide schema of mcpbench's token scenario (T1, large catalogue): the tables of a small
-- company's ERP, CRM and helpdesk in one SQLite database, served by the sql plugin as
-- plugin "erp", connection "erp" (tools erp_erp_v1_<table>_<operation>). The rows are few:
-- the scenario lists these tables and makes a handful of calls on them.

-- Organisation and people.
CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, cost_center_id INTEGER, manager_id INTEGER);
CREATE TABLE employees (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, email TEXT UNIQUE, department_id INTEGER REFERENCES departments(id), job_title TEXT, hired_on TEXT, salary REAL, active BOOLEAN NOT NULL DEFAULT 1);
CREATE TABLE timesheets (id INTEGER PRIMARY KEY, employee_id INTEGER NOT NULL REFERENCES employees(id), project_id INTEGER, work_date TEXT NOT NULL, hours REAL NOT NULL, billable BOOLEAN NOT NULL DEFAULT 1);
CREATE TABLE leave_requests (id INTEGER PRIMARY KEY, employee_id INTEGER NOT NULL REFERENCES employees(id), kind TEXT NOT NULL, starts_on TEXT NOT NULL, ends_on TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending');
CREATE TABLE payroll_runs (id INTEGER PRIMARY KEY, period TEXT NOT NULL, paid_on TEXT, gross_total REAL, net_total REAL, status TEXT NOT NULL DEFAULT 'draft');
CREATE TABLE expense_claims (id INTEGER PRIMARY KEY, employee_id INTEGER NOT NULL REFERENCES employees(id), submitted_on TEXT NOT NULL, amount REAL NOT NULL, category TEXT, receipt_url TEXT, status TEXT NOT NULL DEFAULT 'submitted');

-- CRM.
CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT NOT NULL, industry TEXT, website TEXT, country TEXT, annual_revenue REAL, owner_id INTEGER REFERENCES employees(id));
CREATE TABLE contacts (id INTEGER PRIMARY KEY, account_id INTEGER REFERENCES accounts(id), first_name TEXT NOT NULL, last_name TEXT NOT NULL, email TEXT, phone TEXT, title TEXT);
CREATE TABLE leads (id INTEGER PRIMARY KEY, company TEXT NOT NULL, contact_name TEXT, email TEXT, source TEXT, score INTEGER, status TEXT NOT NULL DEFAULT 'new');
CREATE TABLE opportunities (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), name TEXT NOT NULL, stage TEXT NOT NULL, amount REAL, close_date TEXT, probability INTEGER);
CREATE TABLE campaigns (id INTEGER PRIMARY KEY, name TEXT NOT NULL, channel TEXT, budget REAL, starts_on TEXT, ends_on TEXT);
CREATE TABLE campaign_members (id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id), contact_id INTEGER REFERENCES contacts(id), lead_id INTEGER REFERENCES leads(id), responded BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE activities (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, subject TEXT NOT NULL, due_at TEXT, done BOOLEAN NOT NULL DEFAULT 0, account_id INTEGER REFERENCES accounts(id), owner_id INTEGER REFERENCES employees(id));
CREATE TABLE crm_notes (id INTEGER PRIMARY KEY, account_id INTEGER REFERENCES accounts(id), author_id INTEGER REFERENCES employees(id), body TEXT NOT NULL, created_at TEXT NOT NULL);

-- Sales.
CREATE TABLE price_lists (id INTEGER PRIMARY KEY, name TEXT NOT NULL, currency_code TEXT NOT NULL, valid_from TEXT, valid_to TEXT);
CREATE TABLE discounts (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, percent REAL NOT NULL, valid_until TEXT, max_uses INTEGER);
CREATE TABLE quotes (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), opportunity_id INTEGER REFERENCES opportunities(id), issued_on TEXT NOT NULL, expires_on TEXT, total REAL, status TEXT NOT NULL DEFAULT 'draft');
CREATE TABLE quote_lines (id INTEGER PRIMARY KEY, quote_id INTEGER NOT NULL REFERENCES quotes(id), stock_item_id INTEGER, quantity INTEGER NOT NULL, unit_price REAL NOT NULL);
CREATE TABLE sales_orders (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), quote_id INTEGER REFERENCES quotes(id), ordered_on TEXT NOT NULL, total REAL, status TEXT NOT NULL DEFAULT 'open');
CREATE TABLE sales_order_lines (id INTEGER PRIMARY KEY, sales_order_id INTEGER NOT NULL REFERENCES sales_orders(id), stock_item_id INTEGER, quantity INTEGER NOT NULL, unit_price REAL NOT NULL);
CREATE TABLE subscriptions (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), plan TEXT NOT NULL, seats INTEGER, renews_on TEXT, monthly_fee REAL, cancelled BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE contracts (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), title TEXT NOT NULL, signed_on TEXT, ends_on TEXT, value REAL, document_url TEXT);

-- Finance.
CREATE TABLE currencies (code TEXT PRIMARY KEY, name TEXT NOT NULL, rate_to_eur REAL NOT NULL);
CREATE TABLE tax_rates (id INTEGER PRIMARY KEY, country TEXT NOT NULL, name TEXT NOT NULL, rate REAL NOT NULL);
CREATE TABLE invoices (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id), sales_order_id INTEGER REFERENCES sales_orders(id), issued_on TEXT NOT NULL, due_on TEXT NOT NULL, currency_code TEXT NOT NULL, total REAL NOT NULL, status TEXT NOT NULL DEFAULT 'open');
CREATE TABLE invoice_lines (id INTEGER PRIMARY KEY, invoice_id INTEGER NOT NULL REFERENCES invoices(id), description TEXT NOT NULL, quantity REAL NOT NULL, unit_price REAL NOT NULL, tax_rate_id INTEGER REFERENCES tax_rates(id));
CREATE TABLE payments (id INTEGER PRIMARY KEY, invoice_id INTEGER NOT NULL REFERENCES invoices(id), received_on TEXT NOT NULL, amount REAL NOT NULL, method TEXT);
CREATE TABLE credit_notes (id INTEGER PRIMARY KEY, invoice_id INTEGER NOT NULL REFERENCES invoices(id), issued_on TEXT NOT NULL, amount REAL NOT NULL, reason TEXT);
CREATE TABLE gl_accounts (id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, name TEXT NOT NULL, kind TEXT NOT NULL);
CREATE TABLE journal_entries (id INTEGER PRIMARY KEY, posted_on TEXT NOT NULL, gl_account_id INTEGER NOT NULL REFERENCES gl_accounts(id), debit REAL NOT NULL DEFAULT 0, credit REAL NOT NULL DEFAULT 0, memo TEXT);
CREATE TABLE cost_centers (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, name TEXT NOT NULL);
CREATE TABLE budgets (id INTEGER PRIMARY KEY, cost_center_id INTEGER NOT NULL REFERENCES cost_centers(id), fiscal_year INTEGER NOT NULL, amount REAL NOT NULL);
CREATE TABLE bank_accounts (id INTEGER PRIMARY KEY, bank_name TEXT NOT NULL, iban TEXT NOT NULL UNIQUE, currency_code TEXT NOT NULL, balance REAL);

-- Supply chain.
CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT, email TEXT, payment_terms_days INTEGER);
CREATE TABLE warehouses (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, capacity INTEGER);
CREATE TABLE stock_items (id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, name TEXT NOT NULL, unit TEXT NOT NULL DEFAULT 'pcs', reorder_level INTEGER, cost REAL);
CREATE TABLE stock_levels (id INTEGER PRIMARY KEY, stock_item_id INTEGER NOT NULL REFERENCES stock_items(id), warehouse_id INTEGER NOT NULL REFERENCES warehouses(id), on_hand INTEGER NOT NULL, reserved INTEGER NOT NULL DEFAULT 0);
CREATE TABLE stock_movements (id INTEGER PRIMARY KEY, stock_item_id INTEGER NOT NULL REFERENCES stock_items(id), warehouse_id INTEGER NOT NULL REFERENCES warehouses(id), moved_at TEXT NOT NULL, quantity INTEGER NOT NULL, reason TEXT);
CREATE TABLE purchase_orders (id INTEGER PRIMARY KEY, supplier_id INTEGER NOT NULL REFERENCES suppliers(id), ordered_on TEXT NOT NULL, expected_on TEXT, total REAL, status TEXT NOT NULL DEFAULT 'sent');
CREATE TABLE purchase_order_lines (id INTEGER PRIMARY KEY, purchase_order_id INTEGER NOT NULL REFERENCES purchase_orders(id), stock_item_id INTEGER NOT NULL REFERENCES stock_items(id), quantity INTEGER NOT NULL, unit_cost REAL NOT NULL);
CREATE TABLE carriers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tracking_url TEXT);
CREATE TABLE shipments (id INTEGER PRIMARY KEY, sales_order_id INTEGER NOT NULL REFERENCES sales_orders(id), carrier_id INTEGER REFERENCES carriers(id), tracking_number TEXT, shipped_on TEXT, delivered_on TEXT);
CREATE TABLE returns (id INTEGER PRIMARY KEY, sales_order_id INTEGER NOT NULL REFERENCES sales_orders(id), received_on TEXT, reason TEXT, refund_amount REAL);

-- Helpdesk.
CREATE TABLE support_queues (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email_alias TEXT);
CREATE TABLE sla_policies (id INTEGER PRIMARY KEY, name TEXT NOT NULL, first_response_hours INTEGER NOT NULL, resolution_hours INTEGER NOT NULL);
CREATE TABLE tickets (id INTEGER PRIMARY KEY, subject TEXT NOT NULL, requester_email TEXT NOT NULL, account_id INTEGER REFERENCES accounts(id), queue_id INTEGER REFERENCES support_queues(id), assignee_id INTEGER REFERENCES employees(id), priority TEXT NOT NULL DEFAULT 'normal', status TEXT NOT NULL DEFAULT 'open', opened_at TEXT NOT NULL, sla_policy_id INTEGER REFERENCES sla_policies(id));
CREATE TABLE ticket_comments (id INTEGER PRIMARY KEY, ticket_id INTEGER NOT NULL REFERENCES tickets(id), author_email TEXT NOT NULL, body TEXT NOT NULL, public BOOLEAN NOT NULL DEFAULT 1, created_at TEXT NOT NULL);
CREATE TABLE knowledge_articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, published BOOLEAN NOT NULL DEFAULT 0, views INTEGER NOT NULL DEFAULT 0);
CREATE TABLE satisfaction_surveys (id INTEGER PRIMARY KEY, ticket_id INTEGER NOT NULL REFERENCES tickets(id), rating INTEGER NOT NULL, comment TEXT, answered_at TEXT);

-- Projects and assets.
CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT NOT NULL, account_id INTEGER REFERENCES accounts(id), manager_id INTEGER REFERENCES employees(id), starts_on TEXT, due_on TEXT, budget REAL, status TEXT NOT NULL DEFAULT 'active');
CREATE TABLE project_tasks (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id), title TEXT NOT NULL, assignee_id INTEGER REFERENCES employees(id), due_on TEXT, done BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE milestones (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id), name TEXT NOT NULL, due_on TEXT, reached BOOLEAN NOT NULL DEFAULT 0);
CREATE TABLE assets (id INTEGER PRIMARY KEY, tag TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, assigned_to INTEGER REFERENCES employees(id), purchased_on TEXT, value REAL);
CREATE TABLE maintenance_orders (id INTEGER PRIMARY KEY, asset_id INTEGER NOT NULL REFERENCES assets(id), scheduled_on TEXT NOT NULL, description TEXT, done BOOLEAN NOT NULL DEFAULT 0);

INSERT INTO departments (name, cost_center_id, manager_id) VALUES ('Sales', 1, 1), ('Support', 2, 3), ('Engineering', 3, 4), ('Finance', 4, 5);
INSERT INTO employees (full_name, email, department_id, job_title, hired_on, salary) VALUES
  ('Alice Moreau', 'alice@example.com', 1, 'Account executive', '2021-04-01', 64000),
  ('Bruno Keller', 'bruno@example.com', 1, 'Sales engineer', '2022-09-15', 71000),
  ('Chen Wei', 'chen@example.com', 2, 'Support lead', '2020-01-10', 58000),
  ('Dana Okafor', 'dana@example.com', 3, 'Backend engineer', '2019-06-03', 83000),
  ('Emil Novak', 'emil@example.com', 4, 'Controller', '2018-11-20', 79000),
  ('Fatima Rahman', 'fatima@example.com', 2, 'Support agent', '2023-02-27', 46000);
INSERT INTO accounts (name, industry, website, country, annual_revenue, owner_id) VALUES
  ('Northwind Traders', 'Retail', 'https://northwind.example', 'US', 12500000, 1),
  ('Contoso Pharma', 'Healthcare', 'https://contoso.example', 'DE', 48000000, 2),
  ('Fabrikam Tools', 'Manufacturing', 'https://fabrikam.example', 'FR', 7300000, 1);
INSERT INTO opportunities (account_id, name, stage, amount, close_date, probability) VALUES
  (1, 'Northwind POS rollout', 'negotiation', 84000, '2026-12-15', 70),
  (2, 'Contoso lab licences', 'qualification', 150000, '2027-02-01', 30),
  (3, 'Fabrikam support renewal', 'negotiation', 22000, '2026-12-01', 80);
INSERT INTO currencies (code, name, rate_to_eur) VALUES ('EUR', 'Euro', 1), ('USD', 'US dollar', 0.93), ('GBP', 'Pound sterling', 1.16);
INSERT INTO invoices (account_id, issued_on, due_on, currency_code, total, status) VALUES
  (1, '2026-10-01', '2026-10-31', 'USD', 18400, 'paid'),
  (2, '2026-10-15', '2026-11-14', 'EUR', 36250, 'open'),
  (3, '2026-11-02', '2026-12-02', 'EUR', 5900, 'open');
INSERT INTO stock_items (sku, name, unit, reorder_level, cost) VALUES
  ('POS-T1', 'Point-of-sale terminal', 'pcs', 10, 320), ('RCPT-80', 'Receipt paper roll 80 mm', 'box', 50, 12.5), ('SCN-2D', '2D barcode scanner', 'pcs', 15, 95);
INSERT INTO support_queues (name, email_alias) VALUES ('General', 'help@example.com'), ('Billing', 'billing@example.com');
INSERT INTO sla_policies (name, first_response_hours, resolution_hours) VALUES ('Standard', 8, 72), ('Premium', 1, 24);
INSERT INTO tickets (subject, requester_email, account_id, queue_id, assignee_id, priority, status, opened_at, sla_policy_id) VALUES
  ('Terminal does not print receipts', 'ops@northwind.example', 1, 1, 3, 'high', 'open', '2026-11-20T09:12:00Z', 2),
  ('Invoice 2 shows the wrong VAT', 'ap@contoso.example', 2, 2, 6, 'normal', 'open', '2026-11-21T14:30:00Z', 1),
  ('How do I reset a scanner?', 'it@fabrikam.example', 3, 1, 6, 'low', 'solved', '2026-11-18T08:05:00Z', 1);
INSERT INTO projects (name, account_id, manager_id, starts_on, due_on, budget, status) VALUES
  ('Northwind store pilot', 1, 2, '2026-09-01', '2027-01-31', 40000, 'active'),
  ('Internal ERP upgrade', NULL, 4, '2026-06-01', '2026-12-20', 65000, 'active');
