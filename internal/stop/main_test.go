package stop

import (
	"os"
	"testing"

	"github.com/stopgate/stopgate/internal/validator/sandboxtest"
)

// TestMain: the stops these tests decide run their confined validators in
// a sandbox that starts this binary again as its runner.
func TestMain(m *testing.M) { os.Exit(sandboxtest.ServeOr(m.Run)) }
