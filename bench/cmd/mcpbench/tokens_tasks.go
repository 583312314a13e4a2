package main

// T1's catalogues and the ten tasks of each one's scripted loop: real calls with valid
// arguments on the npm reference servers, the demo shop database and the wide schema
// (bench/tokens/wide.sql). The data the calls read is written to the scratch directory
// by tokenScratch, so every form's session gets the same answers.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// loopTask is one task of the loop: a request in plain words, the tool meant for it and
// valid arguments.
type loopTask struct {
	Query string
	Tool  string
	Args  json.RawMessage
}

// tokenCatalogue is one catalogue: which servers and plugins one bin/mcpgw serves.
type tokenCatalogue struct {
	Name       string
	Filesystem bool // + filesystem and memory
	Shop       bool // + the sql plugin over examples/shop.sql
	Wide       bool // + the sql plugin over bench/tokens/wide.sql
	// Domains are more sql plugins, one per seed bench/tokens/domains/<name>.sql (plugin
	// and connection <name>): catalogues in domains the search ranker was not tuned on.
	Domains []string
	// QuerySet is the file of search queries asked of this catalogue (relative to the
	// repository); empty: bench/tokens/queries.json.
	QuerySet string
	// Echo: the bench echo server over stdio stands in for server-everything (a smoke
	// run without node or the npm servers).
	Echo  bool
	Tasks func(root string) []loopTask
}

// querySet is the file of the queries asked of c.
func (c tokenCatalogue) querySet() string {
	if c.QuerySet == "" {
		return "bench/tokens/queries.json"
	}
	return c.QuerySet
}

func task(query, tool, args string) loopTask {
	return loopTask{Query: query, Tool: tool, Args: json.RawMessage(args)}
}

// fsArgs is {"path": root/rel} as JSON.
func fsArgs(root, rel string) string {
	b, _ := json.Marshal(map[string]string{"path": filepath.Join(root, rel)})
	return string(b)
}

func smallTasks(string) []loopTask {
	return []loopTask{
		task("Repeat back the words 'ready for takeoff'.", "everything__echo", `{"message":"ready for takeoff"}`),
		task("What is 1234 plus 4321?", "everything__get-sum", `{"a":1234,"b":4321}`),
		task("Show me what an annotated success message looks like.", "everything__get-annotated-message", `{"messageType":"success"}`),
		task("Give me links to four of the demo resources.", "everything__get-resource-links", `{"count":4}`),
		task("Get a reference to text resource number 3.", "everything__get-resource-reference", `{"resourceType":"Text","resourceId":3}`),
		task("Add 2.5 and 7.25 for me.", "everything__get-sum", `{"a":2.5,"b":7.25}`),
		task("Say 'the gateway works' back to me.", "everything__echo", `{"message":"the gateway works"}`),
		task("How is a debug message annotated? Show one.", "everything__get-annotated-message", `{"messageType":"debug"}`),
		task("What is the weather in Chicago, as structured data?", "everything__get-structured-content", `{"location":"Chicago"}`),
		task("Sum 10 and 32.", "everything__get-sum", `{"a":10,"b":32}`),
	}
}

func mediumTasks(root string) []loopTask {
	return []loopTask{
		task("Echo 'hello gateway'.", "everything__echo", `{"message":"hello gateway"}`),
		task("What is 17 plus 25?", "everything__get-sum", `{"a":17,"b":25}`),
		task("What is in my project folder?", "filesystem__list_directory", fsArgs(root, "")),
		task("Read the notes file in the docs folder.", "filesystem__read_text_file", fsArgs(root, "docs/notes.md")),
		task("How big is the readme, and when was it changed?", "filesystem__get_file_info", fsArgs(root, "README.md")),
		task("Show me everything stored in the knowledge graph.", "memory__read_graph", `{}`),
		task("What do we remember about Ada?", "memory__search_nodes", `{"query":"Ada"}`),
		task("Which shop customers are in the US?", "shop_shop_v1_customers_find", `{"connectionId":"shop","filter":[{"field":"country","operator":"eq","value":"US"}]}`),
		task("Look up shop order 2.", "shop_shop_v1_orders_get", `{"connectionId":"shop","id":"2"}`),
		task("How many products does the shop have?", "shop_shop_v1_products_count", `{"connectionId":"shop"}`),
	}
}

func largeTasks(root string) []loopTask {
	return []loopTask{
		task("What is in my project folder?", "filesystem__list_directory", fsArgs(root, "")),
		task("What do we remember about Ada?", "memory__search_nodes", `{"query":"Ada"}`),
		task("Look up shop order 2.", "shop_shop_v1_orders_get", `{"connectionId":"shop","id":"2"}`),
		task("Which helpdesk tickets are still open?", "erp_erp_v1_tickets_find", `{"connectionId":"erp","filter":[{"field":"status","operator":"eq","value":"open"}]}`),
		task("Show me invoice number 2.", "erp_erp_v1_invoices_get", `{"connectionId":"erp","id":"2"}`),
		task("Who works in the support department?", "erp_erp_v1_employees_find", `{"connectionId":"erp","filter":[{"field":"department_id","operator":"eq","value":2}]}`),
		task("List our projects.", "erp_erp_v1_projects_list", `{"connectionId":"erp","pageSize":10}`),
		task("How many stock items do we carry?", "erp_erp_v1_stock_items_count", `{"connectionId":"erp"}`),
		task("Which sales opportunities are in negotiation?", "erp_erp_v1_opportunities_find", `{"connectionId":"erp","filter":[{"field":"stage","operator":"eq","value":"negotiation"}]}`),
		task("What is 17 plus 25?", "everything__get-sum", `{"a":17,"b":25}`),
	}
}

func servicesTasks(root string) []loopTask {
	return []loopTask{
		task("Which appointments are booked with Dr. Duarte?", "clinic_clinic_v1_appointments_find", `{"connectionId":"clinic","filter":[{"field":"practitioner_id","operator":"eq","value":1}]}`),
		task("Is patient 1 allergic to anything?", "clinic_clinic_v1_allergies_find", `{"connectionId":"clinic","filter":[{"field":"patient_id","operator":"eq","value":1}]}`),
		task("Where is consignment 1 now?", "freight_freight_v1_consignments_get", `{"connectionId":"freight","id":"1"}`),
		task("Who signed for the delivery of consignment 3?", "freight_freight_v1_proof_of_delivery_find", `{"connectionId":"freight","filter":[{"field":"consignment_id","operator":"eq","value":3}]}`),
		task("Which pupils were absent this morning?", "school_school_v1_attendance_marks_find", `{"connectionId":"school","filter":[{"field":"mark","operator":"eq","value":"absent"}]}`),
		task("What homework is set?", "school_school_v1_homework_list", `{"connectionId":"school","pageSize":10}`),
		task("Which books are out on loan?", "library_library_v1_loans_find", `{"connectionId":"library","filter":[{"field":"returned_on","operator":"is_null","value":true}]}`),
		task("How many titles does the library catalogue hold?", "library_library_v1_titles_count", `{"connectionId":"library"}`),
		task("What is in my project folder?", "filesystem__list_directory", fsArgs(root, "")),
		task("What is 19 plus 23?", "everything__get-sum", `{"a":19,"b":23}`),
	}
}

func tradesTasks(root string) []loopTask {
	return []loopTask{
		task("Which reservations are confirmed?", "hotel_hotel_v1_reservations_find", `{"connectionId":"hotel","filter":[{"field":"status","operator":"eq","value":"confirmed"}]}`),
		task("Show me room 3's details.", "hotel_hotel_v1_rooms_get", `{"connectionId":"hotel","id":"3"}`),
		task("How many rooms does the hotel have?", "hotel_hotel_v1_rooms_count", `{"connectionId":"hotel"}`),
		task("Which potholes are on Elm Road?", "council_council_v1_highway_defects_find", `{"connectionId":"council","filter":[{"field":"street","operator":"eq","value":"Elm Road"}]}`),
		task("When are the bins collected?", "council_council_v1_waste_collections_list", `{"connectionId":"council","pageSize":10}`),
		task("Which repair jobs are still open?", "garage_garage_v1_job_cards_find", `{"connectionId":"garage","filter":[{"field":"status","operator":"eq","value":"open"}]}`),
		task("Show the garage's parts stock.", "garage_garage_v1_parts_list", `{"connectionId":"garage","pageSize":10}`),
		task("Look up vehicle 2.", "garage_garage_v1_vehicles_get", `{"connectionId":"garage","id":"2"}`),
		task("What do we remember about Ada?", "memory__search_nodes", `{"query":"Ada"}`),
		task("Read the notes file in the docs folder.", "filesystem__read_text_file", fsArgs(root, "docs/notes.md")),
	}
}

// echoTasks stand in for smallTasks when the bench echo server replaces server-everything.
func echoTasks(string) []loopTask {
	out := make([]loopTask, 10)
	for i := range out {
		out[i] = task(fmt.Sprintf("Echo request number %d.", i+1), "everything__echo", fmt.Sprintf(`{"text":"request %d"}`, i+1))
	}
	return out
}

// tokenCatalogues are T1's catalogues, the blind ones last; small is the echo stand-in when echo is set.
func tokenCatalogues(echo bool) []tokenCatalogue {
	small := tokenCatalogue{Name: catSmall, Tasks: smallTasks}
	if echo {
		small = tokenCatalogue{Name: catSmall, Echo: true, Tasks: echoTasks}
	}
	return append([]tokenCatalogue{
		small,
		{Name: catMedium, Filesystem: true, Shop: true, Tasks: mediumTasks},
		{Name: catLarge, Filesystem: true, Shop: true, Wide: true, Tasks: largeTasks},
		{Name: catServices, Filesystem: true, Domains: []string{"clinic", "freight", "school", "library"},
			QuerySet: "bench/tokens/queries-services.json", Tasks: servicesTasks},
		{Name: catTrades, Filesystem: true, Domains: []string{"hotel", "council", "garage"},
			QuerySet: "bench/tokens/queries-trades.json", Tasks: tradesTasks},
	}, blindCatalogues()...)
}

// memorySeed is the knowledge graph the memory server starts from (its JSONL file).
const memorySeed = `{"type":"entity","name":"Ada Lovelace","entityType":"person","observations":["wrote the first published program","works with the analytical engine"]}
{"type":"entity","name":"Analytical Engine","entityType":"machine","observations":["designed by Charles Babbage"]}
{"type":"entity","name":"Charles Babbage","entityType":"person","observations":["mathematician"]}
{"type":"relation","from":"Ada Lovelace","to":"Analytical Engine","relationType":"programs"}
{"type":"relation","from":"Charles Babbage","to":"Analytical Engine","relationType":"designed"}
`

// tokenScratch writes a catalogue's data under dir: the filesystem server's root, the
// memory server's graph, and the sql plugins' seeds (their databases are made from them).
func tokenScratch(dir string) (root string, err error) {
	root = filepath.Join(dir, "root")
	files := map[string]string{
		filepath.Join(root, "README.md"):        "# demo project\n\nA folder for mcpbench's token scenario.\n",
		filepath.Join(root, "docs", "notes.md"): "# notes\n\n- ship the search form\n- measure tokens, not bytes\n",
		filepath.Join(root, "src", "main.go"):   "package main\n\nfunc main() {}\n",
		filepath.Join(dir, "memory.jsonl"):      memorySeed,
	}
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	return root, nil
}

// tokenConfig is the body of a catalogue's mcpgw config (all but listen and state_dir):
// one page holds the whole list, the stdio servers run one process per agent, and every session here is one agent's (a
// session per form must not start its own node processes).
func (e *env) tokenConfig(c tokenCatalogue, dir, root string) string {
	var b strings.Builder
	b.WriteString("store: memory\nhttp:\n  page_size: 100000\nservers:\n")
	stdio := func(name, command string, args []string, env map[string]string) {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = strconv.Quote(a)
		}
		fmt.Fprintf(&b, "  %s:\n    type: stdio\n    command: %s\n    args: [%s]\n    mode: per_agent\n    timeouts: {connect: 60s}\n",
			name, strconv.Quote(command), strings.Join(q, ", "))
		if len(env) > 0 {
			b.WriteString("    env:\n")
		}
		for k, v := range env {
			fmt.Fprintf(&b, "      %s: %s\n", k, strconv.Quote(v))
		}
	}
	mods := filepath.Join(e.repo, "test/e2e/node_modules/@modelcontextprotocol")
	if c.Echo {
		stdio("everything", e.self, []string{"echo", "-stdio"}, nil)
	} else {
		stdio("everything", e.nodeBin, []string{filepath.Join(mods, "server-everything/dist/index.js")}, nil)
	}
	if c.Filesystem {
		stdio("filesystem", e.nodeBin, []string{filepath.Join(mods, "server-filesystem/dist/index.js"), root}, nil)
		stdio("memory", e.nodeBin, []string{filepath.Join(mods, "server-memory/dist/index.js")}, map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")})
	}
	if c.Shop || c.Wide || len(c.Domains) > 0 {
		b.WriteString("plugins:\n")
	}
	plugin := func(name, seed string) {
		fmt.Fprintf(&b, "  %s:\n    type: sql\n    connections:\n      %s: {driver: sqlite, dsn: %q, seed: %q}\n",
			name, name, filepath.Join(dir, name+".db"), seed)
	}
	if c.Shop {
		plugin("shop", filepath.Join(e.repo, "examples/shop.sql"))
	}
	if c.Wide {
		plugin("erp", filepath.Join(e.repo, "bench/tokens/wide.sql"))
	}
	for _, d := range c.Domains {
		plugin(d, filepath.Join(e.repo, "bench/tokens/domains", d+".sql"))
	}
	return b.String()
}

// tokenQuery is one search query of bench/tokens/queries.json (or a catalogue's own set): a request in plain words
// and the exposed name of the tool meant for it.
type tokenQuery struct {
	Query string `json:"query"`
	Tool  string `json:"tool"`
}

func loadQueries(path string) ([]tokenQuery, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []tokenQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return qs, nil
}
