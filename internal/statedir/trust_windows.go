package statedir

// NoFollow is 0 on Windows: os.OpenFile has no flag that refuses a link there.
const NoFollow = 0

// checkTrusted: on Windows the state directory under %LOCALAPPDATA% is private to the
// user by its ACL; Unix owners and mode bits say nothing there.
func checkTrusted(string) error { return nil }
