package main

// T1's second pair of blind catalogues, travel and homes: domains the search ranker was
// never tuned on (bench/tokens/domains: airline, carhire, campsite; lettings, removals,
// allotments), each with its own query set written before anything ranked it, and the
// ten tasks of each one's loop (reads only, so every form's session gets the same
// answers).

// Names of the second pair of blind catalogues.
const (
	catTravel = "travel"
	catHomes  = "homes"
)

// blindCatalogues2 are the travel and homes catalogues: the npm servers and three sql
// domains each.
func blindCatalogues2() []tokenCatalogue {
	return []tokenCatalogue{
		{Name: catTravel, Filesystem: true, Domains: []string{"airline", "carhire", "campsite"},
			QuerySet: "bench/tokens/queries-travel.json", Tasks: travelTasks},
		{Name: catHomes, Filesystem: true, Domains: []string{"lettings", "removals", "allotments"},
			QuerySet: "bench/tokens/queries-homes.json", Tasks: homesTasks},
	}
}

func travelTasks(root string) []loopTask {
	return []loopTask{
		task("Has flight SK205 back from Faro been delayed?", "airline_airline_v1_flights_find", `{"connectionId":"airline","filter":[{"field":"flight_number","operator":"eq","value":"SK205"}]}`),
		task("Which passengers hold gold frequent flyer status?", "airline_airline_v1_passengers_find", `{"connectionId":"airline","filter":[{"field":"tier","operator":"eq","value":"gold"}]}`),
		task("Find the booking with reference QX7K2M.", "airline_airline_v1_bookings_find", `{"connectionId":"airline","filter":[{"field":"record_locator","operator":"eq","value":"QX7K2M"}]}`),
		task("Which lost or delayed bags are still not sorted out?", "airline_airline_v1_mishandled_bag_reports_find", `{"connectionId":"airline","filter":[{"field":"resolved","operator":"eq","value":false}]}`),
		task("Which hire cars are free to rent?", "carhire_carhire_v1_vehicles_find", `{"connectionId":"carhire","filter":[{"field":"status","operator":"eq","value":"available"}]}`),
		task("List the car hire branches.", "carhire_carhire_v1_branches_list", `{"connectionId":"carhire","pageSize":10}`),
		task("Open car hire rental agreement 1.", "carhire_carhire_v1_rental_agreements_get", `{"connectionId":"carhire","id":"1"}`),
		task("Which campsite pitches have electric hook-up?", "campsite_campsite_v1_pitches_find", `{"connectionId":"campsite","filter":[{"field":"electric_hookup","operator":"eq","value":true}]}`),
		task("Count the campsite's pitches.", "campsite_campsite_v1_pitches_count", `{"connectionId":"campsite"}`),
		task("Show my project folder as a tree.", "filesystem__directory_tree", fsArgs(root, "")),
	}
}

func homesTasks(string) []loopTask {
	return []loopTask{
		task("Which properties are still to let?", "lettings_lettings_v1_properties_find", `{"connectionId":"lettings","filter":[{"field":"status","operator":"eq","value":"to let"}]}`),
		task("When do the gas safety certificates run out?", "lettings_lettings_v1_compliance_certificates_find", `{"connectionId":"lettings","filter":[{"field":"certificate_type","operator":"eq","value":"gas safety"}]}`),
		task("Which repairs at our lets are urgent?", "lettings_lettings_v1_maintenance_requests_find", `{"connectionId":"lettings","filter":[{"field":"priority","operator":"eq","value":"urgent"}]}`),
		task("List the landlords on our books.", "lettings_lettings_v1_landlords_list", `{"connectionId":"lettings","pageSize":10}`),
		task("Which removal porters are available?", "removals_removals_v1_porters_find", `{"connectionId":"removals","filter":[{"field":"available","operator":"eq","value":true}]}`),
		task("Open removal job 1.", "removals_removals_v1_removal_jobs_get", `{"connectionId":"removals","id":"1"}`),
		task("Which removal quotes have been accepted?", "removals_removals_v1_quotes_find", `{"connectionId":"removals","filter":[{"field":"accepted","operator":"eq","value":true}]}`),
		task("Which allotment plots are vacant?", "allotments_allotments_v1_plots_find", `{"connectionId":"allotments","filter":[{"field":"vacant","operator":"eq","value":true}]}`),
		task("Count the allotment society's members.", "allotments_allotments_v1_members_count", `{"connectionId":"allotments"}`),
		task("What is in our knowledge graph?", "memory__read_graph", `{}`),
	}
}
