package registry

import "github.com/mcpgw/mcpgw/internal/registry/internal/instances"

// The names of the instances' types as the rest of the module used them before they
// moved to internal/registry/internal/instances. They stay until their users name the
// package's own.

// Server is instances.Server.
type Server = instances.Server

// Status is instances.Status.
type Status = instances.Status

// Instances is instances.Instances.
type Instances = instances.Instances

// Owner is instances.Owner.
type Owner = instances.Owner

// OwnerSpec is instances.OwnerSpec.
type OwnerSpec = instances.OwnerSpec

// Pool is instances.Pool.
type Pool = instances.Pool

// Instance is instances.Instance.
type Instance = instances.Instance

// PoolStats is instances.PoolStats.
type PoolStats = instances.PoolStats

// PoolFullError is instances.PoolFullError.
type PoolFullError = instances.PoolFullError

// ShareError is instances.ShareError.
type ShareError = instances.ShareError

// Timing is instances.Timing: how a registry paces its supervision.
type Timing = instances.Timing

// DefaultTiming is the timing of a registry that sets none (instances.DefaultTiming).
func DefaultTiming() Timing { return instances.DefaultTiming() }

// Server states (instances.StateStarting, ...).
const (
	StateStarting = instances.StateStarting
	StateUp       = instances.StateUp
	StateDown     = instances.StateDown
	StateStopped  = instances.StateStopped
)

// ErrPoolStopped is instances.ErrPoolStopped.
var ErrPoolStopped = instances.ErrPoolStopped
