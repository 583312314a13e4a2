-- The seed of the example shop database (examples/mcpgw.yaml, plugin "shop"): the sql
-- plugin runs it once to create the database file when it does not exist yet. Delete the
-- file (.cache/state/shop.db under `make run`) to start again from these rows.
CREATE TABLE customers (
  id      INTEGER PRIMARY KEY,
  name    TEXT NOT NULL,
  email   TEXT UNIQUE,
  country TEXT NOT NULL,
  vip     BOOLEAN NOT NULL DEFAULT 0
);
CREATE TABLE products (
  sku    TEXT PRIMARY KEY,
  title  TEXT NOT NULL,
  price  REAL NOT NULL,
  stock  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE orders (
  id          INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  sku         TEXT NOT NULL REFERENCES products(sku),
  quantity    INTEGER NOT NULL,
  status      TEXT NOT NULL DEFAULT 'new',
  placed      TEXT NOT NULL
);
INSERT INTO customers (name, email, country, vip) VALUES
  ('Ada Lovelace',     'ada@example.com',     'GB', 1),
  ('Grace Hopper',     'grace@example.com',   'US', 1),
  ('Linus Torvalds',   'linus@example.com',   'FI', 0),
  ('Margaret Hamilton','margaret@example.com','US', 0),
  ('Ken Thompson',     'ken@example.com',     'US', 0),
  ('Barbara Liskov',   'barbara@example.com', 'US', 1);
INSERT INTO products (sku, title, price, stock) VALUES
  ('KB-01', 'Mechanical keyboard', 89.00, 12),
  ('MS-02', 'Trackball mouse',     45.50,  0),
  ('MN-27', '27" monitor',        249.99,  4),
  ('HD-05', 'Headphones',          79.90, 30);
INSERT INTO orders (customer_id, sku, quantity, status, placed) VALUES
  (1, 'KB-01', 1, 'shipped',   '2025-03-01'),
  (2, 'MN-27', 2, 'new',       '2025-03-02'),
  (2, 'HD-05', 1, 'shipped',   '2025-03-02'),
  (3, 'MS-02', 3, 'cancelled', '2025-03-04'),
  (5, 'KB-01', 1, 'new',       '2025-03-05'),
  (6, 'HD-05', 2, 'new',       '2025-03-06');
