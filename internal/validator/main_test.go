package validator_test

import (
	"os"
	"testing"

	"github.com/stopgate/stopgate/internal/validator/sandboxtest"
)

// TestMain: the confined validators these tests run start this binary
// again, inside the sandbox, as its runner.
func TestMain(m *testing.M) { os.Exit(sandboxtest.ServeOr(m.Run)) }
