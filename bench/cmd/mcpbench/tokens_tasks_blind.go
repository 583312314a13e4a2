package main

// T1's blind catalogues, care and civic: domains the search ranker was never tuned on
// (bench/tokens/domains: vet, leisure, dental; water, museum, admissions), each with its
// own query set written before anything ranked it, and the ten tasks of each one's loop
// (reads only, so every form's session gets the same answers).

// Names of the blind catalogues.
const (
	catCare  = "care"
	catCivic = "civic"
)

// blindCatalogues are the care and civic catalogues (the npm servers and three sql
// domains each), then travel and homes.
func blindCatalogues() []tokenCatalogue {
	return append([]tokenCatalogue{
		{Name: catCare, Filesystem: true, Domains: []string{"vet", "leisure", "dental"},
			QuerySet: "bench/tokens/queries-care.json", Tasks: careTasks},
		{Name: catCivic, Filesystem: true, Domains: []string{"water", "museum", "admissions"},
			QuerySet: "bench/tokens/queries-civic.json", Tasks: civicTasks},
	}, blindCatalogues2()...)
}

func careTasks(string) []loopTask {
	return []loopTask{
		task("Which animals are due a booster jab before Christmas?", "vet_vet_v1_vaccinations_find", `{"connectionId":"vet","filter":[{"field":"booster_due_on","operator":"lte","value":"2026-12-25"}]}`),
		task("What did Biscuit weigh last time?", "vet_vet_v1_weight_checks_find", `{"connectionId":"vet","filter":[{"field":"patient_id","operator":"eq","value":1}]}`),
		task("Which vet is on call?", "vet_vet_v1_veterinarians_find", `{"connectionId":"vet","filter":[{"field":"on_call","operator":"eq","value":true}]}`),
		task("Show the leisure centre's class timetable.", "leisure_leisure_v1_fitness_classes_list", `{"connectionId":"leisure","pageSize":10}`),
		task("Count the leisure centre's members.", "leisure_leisure_v1_members_count", `{"connectionId":"leisure"}`),
		task("Which gym machines are out of service?", "leisure_leisure_v1_equipment_faults_find", `{"connectionId":"leisure","filter":[{"field":"out_of_service","operator":"eq","value":true}]}`),
		task("Open dental patient 1's record.", "dental_dental_v1_patients_get", `{"connectionId":"dental","id":"1"}`),
		task("Which crowns are still at the dental lab?", "dental_dental_v1_lab_orders_find", `{"connectionId":"dental","filter":[{"field":"received","operator":"eq","value":false}]}`),
		task("What do we remember about Ada?", "memory__search_nodes", `{"query":"Ada"}`),
		task("What is 12 plus 30?", "everything__get-sum", `{"a":12,"b":30}`),
	}
}

func civicTasks(root string) []loopTask {
	return []loopTask{
		task("Which water leaks are still open?", "water_water_v1_leak_reports_find", `{"connectionId":"water","filter":[{"field":"status","operator":"eq","value":"open"}]}`),
		task("Is the water being turned off anywhere on purpose?", "water_water_v1_supply_interruptions_find", `{"connectionId":"water","filter":[{"field":"planned","operator":"eq","value":true}]}`),
		task("Show water bill 2.", "water_water_v1_bills_get", `{"connectionId":"water","id":"2"}`),
		task("Which museum pieces are on show in the galleries?", "museum_museum_v1_collection_objects_find", `{"connectionId":"museum","filter":[{"field":"on_display","operator":"eq","value":true}]}`),
		task("What guided tours are booked at the museum?", "museum_museum_v1_guided_tours_list", `{"connectionId":"museum","pageSize":10}`),
		task("Count the items in the museum's collection.", "museum_museum_v1_collection_objects_count", `{"connectionId":"museum"}`),
		task("Which university applications have reached the interview stage?", "admissions_admissions_v1_applications_find", `{"connectionId":"admissions","filter":[{"field":"status","operator":"eq","value":"interview"}]}`),
		task("List the university's degree programmes.", "admissions_admissions_v1_programmes_list", `{"connectionId":"admissions","pageSize":10}`),
		task("Read the notes file in the docs folder.", "filesystem__read_text_file", fsArgs(root, "docs/notes.md")),
		task("What is in my project folder?", "filesystem__list_directory", fsArgs(root, "")),
	}
}
