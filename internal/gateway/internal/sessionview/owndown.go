package sessionview

// IsDown reports whether server's instance is down for the session (SetDown).
func (o *Own) IsDown(server string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.down[server]
}
