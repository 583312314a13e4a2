package plugin

// Connections are the connection ids a generated tool may be called with (its
// connectionId enum), in order. The gateway uses them to decide which resources a
// session may read and subscribe to.
func (t *Tool) Connections() []string { return append([]string(nil), t.conns...) }

// Allows reports whether the tool may be called with connection conn.
func (t *Tool) Allows(conn string) bool { return t.connOK[conn] }
