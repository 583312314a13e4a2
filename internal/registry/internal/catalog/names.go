package catalog

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/mcpgw/mcpgw/config"
)

// ExposedName turns an upstream's tool or prompt name into the name clients see:
// {server}{sep}{name} (prefix always) or name (prefix never), restricted to
// ^[A-Za-z0-9_-]{1,max}$. A name with other characters has them replaced by _ and is
// given a stable hash suffix (the first 4 bytes of sha256(server NUL name), in hex); a
// name too long for max is shaped as ShapeName shapes it, with that same hash: the server
// part is cut so that the tool's own name stays whole, and only a tool name too long by
// itself is cut. The catalogue keeps the mapping back.
func ExposedName(server, name string, n config.Naming) string {
	full, sep := name, ""
	if n.Prefix != "never" {
		full, sep = server+n.Separator+name, n.Separator
	}
	max := n.MaxLength
	if max <= 0 {
		max = 64
	}
	if cleanName(full) && len(full) >= 1 && len(full) <= max {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + name))
	p := nameParts{tool: cleaned(name), hash: hex.EncodeToString(sum[:hashLen/2])}
	if sep != "" {
		p.server, p.sep = cleaned(server), cleaned(sep)
	}
	return p.at(max)
}

// PluginToolName is the exposed name of plugin's tool full (names are not prefixed: a
// plugin's full names start with its own): ExposedName's characters and length limit,
// except that a name cut for length keeps its operation op (get, list, an action's id, a
// utility's list_connections) whole at its end and loses the middle instead:
// k8s_apiextensions_k8s_io_v1_ClusterWideWi_1a84d162_get.
func PluginToolName(plugin, full, op string, n config.Naming) string {
	max := n.MaxLength
	if max <= 0 {
		max = 64
	}
	if cleanName(full) && len(full) >= 1 && len(full) <= max {
		return full
	}
	sum := sha256.Sum256([]byte(plugin + "\x00" + full)) // ExposedName's hash, so only a cut name changes
	p := nameParts{tool: cleaned(full), hash: hex.EncodeToString(sum[:hashLen/2])}
	p.keepTail(op)
	return p.at(max)
}

// PlainName is the name ExposedName starts from, before it is cut or its characters
// replaced: {server}{sep}{name}, or name when names are not prefixed.
func PlainName(server, name string, n config.Naming) string {
	if n.Prefix == "never" {
		return name
	}
	return server + n.Separator + name
}
