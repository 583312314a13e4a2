// Package arch holds no code: its tests read the module's import graph and source and keep
// the package map of docs/architecture.md true (floors, public surface, global state, size).
package arch
