package toolsearch

import (
	"strings"
	"testing"
)

// A plugin tool's name is cut into resource key, domain, resource and operation; any other
// name, or one that only looks like it, is not a plugin tool's.
func TestPluginName(t *testing.T) {
	for _, c := range []struct {
		name, key, domain, resource string
		op                          int
	}{
		{"clinic_clinic_v1_appointments_create", "clinic_clinic_v1_appointments", "clinic", "appointments", opCreate},
		{"erp_erp_v1_sla_policies_get", "erp_erp_v1_sla_policies", "erp", "sla_policies", opGet},
		{"conn_a_b_v12_long_table_name_truncate", "conn_a_b_v12_long_table_name", "a_b", "long_table_name", opTruncate},
		{"shop_v1_orders_count", "shop_v1_orders", "shop", "orders", opCount},
	} {
		key, domain, resource, op, ok := pluginName(c.name)
		if !ok || key != c.key || domain != c.domain || resource != c.resource || op != c.op {
			t.Errorf("pluginName(%q) = %q, %q, %q, %d, %v; want %q, %q, %q, %d", c.name, key, domain, resource, op, ok, c.key, c.domain, c.resource, c.op)
		}
	}
	for _, name := range []string{"filesystem__read_file", "everything__get-sum", "_get", "get", "a_v1__get", "a_v1_get",
		"x_vv_y_get", "x_v_y_get", "v1_x_list", "_v1_x_list", "x_v1_x_GET", "x_v1_x_list_", ""} {
		if key, _, _, _, ok := pluginName(name); ok {
			t.Errorf("pluginName(%q) = %q, ok; want no plugin tool", name, key)
		}
	}
}

// The request's form picks the operation.
func TestIntentOf(t *testing.T) {
	for _, c := range []struct {
		query string
		op    int
	}{
		{"how many patients are registered", opCount},
		{"number of depots we run", opCount},
		{"the number of open invoices", opCount},
		{"phone number of Oliver's mum", opFind},
		{"remove every row of the carriers table", opTruncate},
		{"delete a shop order", opDelete},
		{"cancel someone's visit", opDelete},
		{"please cancel the booking", opDelete},
		{"book a room for two nights", opCreate},
		{"register a new supplier", opCreate},
		{"a customer's car came in, open a new job", opCreate},
		{"change a reservation's dates", opUpdate},
		{"reassign a ticket", opUpdate},
		{"fetch one order by its id", opGet},
		{"details of order 42", opGet},
		{"Show me invoice number 2.", opGet},
		{"Look up vehicle 2.", opGet},
		{"show me room 3's details", opGet},
		{"show orders over 100", opList},
		{"find the 10 latest orders", opFind},
		{"search invoices that are still open", opFind},
		{"which orders are late", opFind},
		{"which doctors are taking new patients", opFind},
		{"is the order cancelled", opFind},
		{"list the projects", opList},
		{"upcoming events", opList},
		{"orders", opFind},
		{"", opFind},
		// An imperative leading a later clause, a phrasal verb, an emptying verb with "all".
		{"the pump is broken, report it", opCreate},
		{"the boiler was serviced today; please log it", opCreate},
		{"the repair is done, mark it completed", opUpdate},
		{"Kofi has left, take him off our list", opDelete},
		{"take Tom off the yoga class", opDelete},
		{"put off the start date by a year", opUpdate},
		{"sign Maria up for swimming", opCreate},
		{"wipe every old check-in record", opTruncate},
		{"clear out all the bookings", opTruncate},
		{"clear the flag on order 4", opGet},
		{"is the pump broken, and who reported it", opFind},
		{"take a look at the open orders", opFind},
	} {
		w := intentOf(c.query)
		best := 0
		for op := range w {
			if w[op] > w[best] {
				best = op
			}
		}
		if best != c.op || w[best] != 1 {
			t.Errorf("intentOf(%q) = %v: best %d, want %d", c.query, w, best, c.op)
		}
	}
}

// structFixture is two tables of a plugin (every operation) and two tools of other
// servers.
func structFixture() ([]Doc, *Index) {
	docs := []Doc{
		{Name: "fs__read_file", Description: "Read a file from disk.", Params: []string{"path"}, ReadOnly: true},
		{Name: "fs__write_file", Description: "Write a file to disk.", Params: []string{"path", "content"}},
	}
	tables := []struct{ name, cols string }{{"appointments", "patient_id starts_at reason"}, {"event_bookings", "event_id seats"}}
	for _, tb := range tables {
		for _, op := range []string{"find", "list", "get", "count", "create", "update", "delete", "truncate"} {
			d := Doc{Name: "clinic_clinic_v1_" + tb.name + "_" + op, Description: op + " rows of table " + tb.name,
				Params: []string{"connectionId"}, ReadOnly: op == "find" || op == "list" || op == "get" || op == "count"}
			if op == "create" || op == "update" {
				d.Params = append(d.Params, strings.Fields(tb.cols)...)
			}
			docs = append(docs, d)
		}
	}
	return docs, New(docs)
}

// A plugin tool is ranked by its table and the operation the request asks for, in one
// ranking with the other tools.
func TestStructuredRanking(t *testing.T) {
	docs, ix := structFixture()
	if ix.res == nil {
		t.Fatal("no plugin resources found in the fixture")
	}
	for _, c := range []struct{ query, first string }{
		{"how many appointments are there", "clinic_clinic_v1_appointments_count"},
		{"book an appointment for tuesday", "clinic_clinic_v1_appointments_create"},
		{"cancel an appointment", "clinic_clinic_v1_appointments_delete"},
		{"which appointments are today", "clinic_clinic_v1_appointments_find"},
		{"move an appointment to another day", "clinic_clinic_v1_appointments_update"},
		{"seats booked for the event", "clinic_clinic_v1_event_bookings_find"},
		{"read a file", "fs__read_file"},
		{"write a file", "fs__write_file"},
	} {
		hits, _ := ix.Rank(c.query, 3)
		if len(hits) == 0 || docs[hits[0].Doc].Name != c.first {
			var got []string
			for _, h := range hits {
				got = append(got, docs[h.Doc].Name)
			}
			t.Errorf("Rank(%q) = %v; want %s first", c.query, got, c.first)
		}
	}
	// A table's read tools share the top places for a request in nouns alone.
	hits, _ := ix.Rank("appointments", 3)
	for _, h := range hits {
		if !strings.HasPrefix(docs[h.Doc].Name, "clinic_clinic_v1_appointments_") {
			t.Errorf("Rank(appointments) has %s", docs[h.Doc].Name)
		}
	}
}

// Odd input neither crashes the structured ranking nor empties it: a huge query, one of
// operation words alone, one of bytes that are no text.
func TestStructuredRankingOddQueries(t *testing.T) {
	_, ix := structFixture()
	huge := strings.Repeat("cancel how many number of appointments ", 20000)
	for _, q := range []string{huge, "delete", "how many", "number of", "\x00\xff\xfe", "_v1_", "APPOINTMENTS COUNT"} {
		if hits, _ := ix.Rank(q, 5); len(hits) == 0 {
			t.Errorf("Rank(%.40q) is empty", q)
		}
	}
}
