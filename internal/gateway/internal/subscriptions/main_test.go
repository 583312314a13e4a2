package subscriptions_test

import (
	"os"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestMain runs the tests with the everything-server up: the external tests here drive a
// whole gateway through gatewaytest.
func TestMain(m *testing.M) { os.Exit(gatewaytest.Main(m)) }
