package wasm

import (
	"context"
	"errors"
)

func errorsIsDeadline(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
