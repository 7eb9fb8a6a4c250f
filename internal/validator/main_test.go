package validator

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(ServeOr(m.Run)) }
