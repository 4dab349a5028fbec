package exactlyonce

import (
	"testing"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
